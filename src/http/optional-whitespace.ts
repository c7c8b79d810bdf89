import { ProblemException } from './problem/problem.exception.js';
import { ProblemTypes } from './problem/problem-types.js';

const SPACE = 0x20;
const TAB = 0x09;

/**
 * A header value or list member without the optional whitespace around it. OWS is SP and HTAB only
 * (RFC 9110 §5.6.3): String#trim would also strip U+00A0, which is the obs-text byte 0xA0 in a
 * header, and so turn a malformed value into a valid one. A scan from each end rather than a regex:
 * `/^[ \t]+|[ \t]+$/g` restarts its second branch at every space of a long run, which is quadratic
 * (16,000 spaces held the event loop for 0.7 s).
 */
export function trimOptionalWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOptionalWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isOptionalWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isOptionalWhitespace(code: number): boolean {
  return code === SPACE || code === TAB;
}

/**
 * Refuses a request header this service parses when it is longer than any honest client would send
 * (431, RFC 6585 §5, naming the field), so no parser ever works on more than `maxLength` characters.
 */
export function assertHeaderLength(value: string, name: string, maxLength: number): void {
  if (value.length > maxLength) {
    throw new ProblemException(
      ProblemTypes.headerFieldsTooLarge,
      `The ${name} header is ${value.length} characters long; at most ${maxLength} are accepted.`,
      { errors: [{ parameter: name, detail: `must be at most ${maxLength} characters` }] },
    );
  }
}
