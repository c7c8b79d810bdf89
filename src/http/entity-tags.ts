import { ProblemException } from './problem/problem.exception.js';
import { ProblemTypes } from './problem/problem-types.js';
import { assertHeaderLength, trimOptionalWhitespace } from './optional-whitespace.js';

export interface EntityTag {
  weak: boolean;
  /** The opaque-tag including its double quotes, as RFC 9110 §8.8.3 writes it. */
  opaque: string;
}

/** `*`, or the entity-tags of an If-Match / If-None-Match header (RFC 9110 §13.1.1, §13.1.2). */
export type EntityTagCondition = '*' | EntityTag[];

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text
const ENTITY_TAG = /^(W\/)?("[\x21\x23-\x7e\x80-\xff]*")$/;
// A post's tag is under 40 characters: this leaves room for a hundred of them.
export const MAX_ENTITY_TAG_LIST_LENGTH = 4_096;

/** Parses a conditional header; undefined when absent, 400 when it is not a valid list of entity-tags. */
export function parseEntityTagCondition(header: string | undefined, name: string): EntityTagCondition | undefined {
  if (header === undefined) return undefined;
  assertHeaderLength(header, name, MAX_ENTITY_TAG_LIST_LENGTH);
  const trimmed = trimOptionalWhitespace(header);
  if (trimmed === '*') return '*';
  const tags: EntityTag[] = [];
  for (const member of trimmed.split(',')) {
    const match = ENTITY_TAG.exec(trimOptionalWhitespace(member));
    if (!match) {
      throw new ProblemException(ProblemTypes.badRequest, `${name} must be * or a list of entity-tags such as "3.7".`, {
        errors: [{ parameter: name, detail: 'not a valid entity-tag list (RFC 9110 §8.8.3)' }],
      });
    }
    tags.push({ weak: match[1] !== undefined, opaque: match[2] });
  }
  return tags;
}

/** Weak comparison, for If-None-Match: only the opaque-tags are compared. */
export function weakMatch(condition: EntityTagCondition, current: string): boolean {
  return condition === '*' || condition.some((tag) => tag.opaque === current);
}
