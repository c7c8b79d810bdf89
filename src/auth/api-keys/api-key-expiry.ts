import type { ApiKey } from './api-key.entity.js';

/**
 * When a key stops working, or null when it never does. A stored expiry that is not a date (an older
 * version stored week dates as '0NaN-aN-aN' on SQLite; MySQL can hold 0000-00-00) counts as expired
 * when the key was created: a key whose end cannot be read must not live forever.
 */
export function expiryOf(key: Pick<ApiKey, 'expiresAt' | 'createdAt'>): Date | null {
  if (key.expiresAt === null) return null;
  return Number.isNaN(key.expiresAt.getTime()) ? key.createdAt : key.expiresAt;
}
