import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

// Recognisable by secret scanners and by people ("posts secret key"), like GitHub's ghp_ or Stripe's sk_.
export const API_KEY_PREFIX = 'psk_';
const RANDOM_BYTES = 32; // 256 bits
const CHECKSUM_LENGTH = 6; // base64url of a 4-byte CRC-32
const TOKEN_PATTERN = /^psk_[A-Za-z0-9_-]{43}[A-Za-z0-9_-]{6}$/;

/** A new API key: prefix, 256 random bits and a CRC-32 checksum, all base64url. Shown to its owner once. */
export function generateApiKeyToken(): string {
  const body = API_KEY_PREFIX + randomBytes(RANDOM_BYTES).toString('base64url');
  return body + checksumOf(body);
}

/**
 * Whether a token has the form of a generated key with a correct checksum. Typos and random guesses
 * are refused without a database lookup; a token of another form (a BOOTSTRAP_API_KEY chosen by an
 * operator) is not a generated key and is looked up by digest as it is.
 */
export function isWellFormedGeneratedKey(token: string): boolean {
  return TOKEN_PATTERN.test(token) && checksumOf(token.slice(0, -CHECKSUM_LENGTH)) === token.slice(-CHECKSUM_LENGTH);
}

export function isGeneratedKeyShape(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

/** What is stored instead of the token: its SHA-256, hex. A leaked table does not leak usable keys. */
export function digestToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** The first characters, enough for a person to tell keys apart in a list; never enough to use. */
export function tokenHint(token: string): string {
  return token.slice(0, API_KEY_PREFIX.length + 4);
}

function checksumOf(body: string): string {
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(crc32(body));
  return checksum.toString('base64url');
}
