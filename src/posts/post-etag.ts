import type { EntityTagCondition } from '../http/entity-tags.js';

/** Strong ETag of a post: id and version. Changes on every write, the same on every instance. */
export function postETag(post: { id: number; version: number }): string {
  return `"${post.id}.${post.version}"`;
}

/** What a write requires of the stored post, from If-Match. */
export type WritePrecondition = { kind: 'none' } | { kind: 'any' } | { kind: 'versions'; versions: number[] };

/**
 * Turns If-Match into the versions a write may apply to, so the check and the write are one UPDATE
 * (`… WHERE id = ? AND version IN (…)`). Weak tags and tags of other posts can never match (strong
 * comparison); a list with nothing usable leaves no version, so the write can only fail with 412.
 */
export function writePrecondition(id: number, ifMatch: EntityTagCondition | undefined): WritePrecondition {
  if (ifMatch === undefined) return { kind: 'none' };
  if (ifMatch === '*') return { kind: 'any' };
  const versions = ifMatch
    .filter((tag) => !tag.weak)
    // Canonical decimals only: strong comparison is character by character, so "05.1" is not "5.1".
    .map((tag) => /^"(0|[1-9]\d*)\.(0|[1-9]\d*)"$/.exec(tag.opaque))
    .filter((match): match is RegExpExecArray => match !== null && match[1] === String(id))
    .map((match) => Number(match[2]))
    .filter((version) => Number.isSafeInteger(version));
  return { kind: 'versions', versions };
}
