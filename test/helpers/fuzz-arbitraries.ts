import { parse as parseQueryString } from 'node:querystring';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { MAX_JSON_DEPTH } from '../../src/http/body/json-body.guard.js';

// Generators of malformed (and a few well-formed) requests for the posts API, each paired with what
// the contract (shared/spec/posts-api.md, docs/api.md) says the service must answer. The oracles
// below are written from the contract, not from the service's code, so they can disagree with it.

export const BODY_LIMIT_BYTES = 1024 * 1024;
/** An If-Match no post can satisfy (there is no post 0): a write carrying it can never apply. */
export const NEVER_MATCHING_ETAG = '"0.0"';
/**
 * Node's HTTP parser answers a request head over 16 KiB with its own 431 before the app sees it, so
 * paths and query strings stay well below that.
 */
export const MAX_URL_LENGTH = 8 * 1024;
/**
 * Requests with long headers keep their whole head under this, so that every 431 they get is the
 * app's, naming the header, and never Node's answer to a head over 16 KiB.
 */
const MAX_HEAD_BYTES = 15_500;
/** Well-formed ids from here on are never reached by the posts a run creates: writes to them are 404. */
export const UNUSED_ID_FLOOR = 1e12;
// docs/api.md: longer If-Match / If-None-Match / Idempotency-Key values are 431, naming the header.
const MAX_ENTITY_TAG_HEADER_LENGTH = 4_096;
const MAX_IDEMPOTENCY_KEY_HEADER_LENGTH = 1_024;

/** The categories of /posts, /api-keys and /events requests (this file). */
export type PostsCategory =
  | 'post-body'
  | 'put-body'
  | 'patch-body'
  | 'raw-body'
  | 'content-type'
  | 'authorization'
  | 'if-match'
  | 'if-none-match'
  | 'idempotency-key'
  | 'api-key-expiry'
  | 'path'
  | 'query'
  | 'events-query';

/** The categories of the revisions and trash routes of contract §10 (fuzz-editorial-routes.ts). */
export type EditorialCategory =
  'revisions-list' | 'revision-one' | 'revision-restore' | 'trash-list' | 'trash-restore' | 'trash-purge';

export type Category = PostsCategory | EditorialCategory;

/** What the problem of a refusal must say beyond its status: its type, and what its `errors` name. */
export interface ExpectedProblem {
  /** The last segment of the problem type URN. */
  type: string;
  /** A body member (JSON Pointer) or a header, path or query parameter that an entry of `errors` names. */
  error: { pointer: string } | { parameter: string };
}

export interface FuzzRequest {
  category: Category;
  method: string;
  /** Path and query, relative to the base URL, exactly as sent. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Well-formed and authorised: only such a request may get a 2xx. */
  valid: boolean;
  /** The statuses the contract allows for this request. */
  expected: readonly number[];
  /** For some statuses, what the problem must say. */
  problems?: Partial<Record<number, ExpectedProblem>>;
  /** Why a 2xx body breaks the contract for this request, or null when it does not. */
  successBodyViolation?: (body: unknown) => string | null;
  /**
   * A post of the writer's to make just before the request is sent, so that a valid write has a post
   * in a known state to change (never a fixture); `{id}` in the path and headers stands for its id.
   */
  setup?: PostSetup;
  /** What a 2xx does to the setup post, for the check of the tables after the run. */
  successEffect?: 'keeps-revision' | 'leaves-trash' | 'erases';
}

export type PostStatus = 'draft' | 'scheduled' | 'published';
export const POST_STATUSES: readonly PostStatus[] = ['draft', 'scheduled', 'published'];

/** The state a setup post is created in: published now, published at a past instant, draft, scheduled. */
export type SetupState = 'published' | 'backdated' | 'draft' | 'scheduled';

export interface PostSetup {
  state: SetupState;
  /** PATCHes of its title after the create: revisions 1..patches, current version patches + 1. */
  patches: number;
  /** Then DELETEd: it is in the trash. */
  trashed: boolean;
}

/** A post in the posts table as the oracles know it: its status, and its publishedAt ('now': around its creation). */
export interface PostState {
  status: PostStatus;
  publishedAt: number | null | 'now';
}

/** A post with revisions 1..revisions (current version revisions + 1) and the cursor of its revisions' second page (limit=1). */
export interface RevisedPost {
  id: number;
  revisions: number;
  cursor: string;
}

/** What the run aims at: tokens, and the fixture posts that malformed writes must leave untouched. */
export interface FuzzTargets {
  /** admin: the only token that may create API keys. */
  adminToken: string;
  /** posts:read and posts:write; the owner of ownPostIds. */
  writerToken: string;
  /** posts:read only. */
  readerToken: string;
  /** Posts of the writer, at version 1 (ETag "<id>.1"). */
  ownPostIds: number[];
  /** Posts of another principal: the writer may not change them. */
  otherPostIds: number[];
  /** A post that was deleted. */
  deletedPostId: number;
  /** The cursor of the second page of GET /posts?limit=1 (order desc, no author). */
  cursor: string;
  /** The id of the newest event once the fixtures were made: no later one is asked for as valid. */
  feedHead: number;
  /**
   * The time (ms) before the fixtures were made. Generated instants stay over an hour away from it, so
   * that none turns from future to past while the run lasts (minutes), and an oracle can tell which.
   */
  clock: number;
  /** posts:read and posts:write: the owner of otherPostIds, hiddenPostIds, revised.other, otherTrashedPostIds. */
  otherWriterToken: string;
  /** The writer's draft, and its post scheduled at SCHEDULED_IN_MS after the clock. */
  ownDraftId: number;
  ownScheduledId: number;
  /** The other writer's draft and scheduled post: 404 to the writer, never listed for it. */
  hiddenPostIds: number[];
  /** Published posts with revisions: the writer's and the other writer's. */
  revised: { own: RevisedPost; other: RevisedPost };
  /** The writer's posts in the trash (deletedPostId among them), and the other writer's. */
  ownTrashedPostIds: number[];
  otherTrashedPostIds: number[];
  /** The cursor of the second page of the writer's GET /trash?limit=1. */
  trashCursor: string;
}

type BodyMode = 'create' | 'replace' | 'patch';

const FIELDS = ['title', 'content', 'author'] as const;
type Field = (typeof FIELDS)[number];

interface TextRule {
  maxLength: number;
  requireVisible: boolean;
  forbids: (text: string) => boolean;
}

// Spec §1: lengths in code points; title and author need a non-whitespace character (whitespace as
// JavaScript's \s sees it) and no control character (Unicode Cc); content only refuses NUL.
const TEXT_RULES: Record<Field, TextRule> = {
  title: { maxLength: 200, requireVisible: true, forbids: (text) => /\p{Cc}/u.test(text) },
  content: { maxLength: 100_000, requireVisible: false, forbids: (text) => text.includes('\u0000') },
  author: { maxLength: 100, requireVisible: true, forbids: (text) => /\p{Cc}/u.test(text) },
};

export function isValidText(value: unknown, rule: TextRule): boolean {
  if (typeof value !== 'string' || !value.isWellFormed()) return false;
  const codePoints = [...value].length;
  if (codePoints < 1 || codePoints > rule.maxLength) return false;
  if (rule.requireVisible && !/\S/u.test(value)) return false;
  return !rule.forbids(value);
}

/** Whether objects and arrays nest deeper than `limit` levels (the top level is 1), as the service counts. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}

/** The members a post body may have: the fields, and the state of contract §10. */
const BODY_MEMBERS: readonly string[] = [...FIELDS, 'status', 'publishedAt'];

/**
 * What the contract makes of a post body, for a create (no current state) or a replace or merge patch
 * of a post in the state `current`:
 * - 'malformed': 400 whatever the post (JSON, members, field rules, a status or a publishedAt that is
 *   not one); `pointer` when a single state member alone is at fault, which the problem must name;
 * - 'refused': well-formed, but not a state the post can take (§10): 400 naming /publishedAt;
 * - 'valid', with the post it must answer;
 * - 'unclear': a publishedAt within an hour of the clock, or a day of the years 1000 and 9999, where
 *   the clocks would decide; the run leaves those out.
 */
export type BodyVerdict =
  | { kind: 'malformed'; pointer?: string }
  | { kind: 'refused' }
  | { kind: 'valid'; post: ExpectedPost }
  | { kind: 'unclear' };

/** What a valid write must answer: the fields it sent, and the state (publishedAt 'now': about now). */
export interface ExpectedPost {
  fields: Partial<Record<Field, string>>;
  status: PostStatus;
  publishedAt: number | null | 'now';
}

export function classifyPostBody(
  bytes: Buffer,
  mode: BodyMode,
  current: PostState | undefined,
  clock: number,
): BodyVerdict {
  let value: unknown;
  try {
    // Fatal: invalid UTF-8 is an error. TextDecoder drops one leading byte order mark, which RFC 8259
    // §8.1 lets a parser ignore.
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return { kind: 'malformed' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'malformed' };
  // Nested deeper than the body guard allows: malformed JSON, before any member is looked at.
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return { kind: 'malformed' };
  const body = value as Record<string, unknown>;
  const members = Object.keys(body);
  if (mode === 'patch' && members.length === 0) return { kind: 'malformed' };
  const broken = members.filter((member) => !BODY_MEMBERS.includes(member));
  for (const field of FIELDS) {
    if (Object.hasOwn(body, field) ? !isValidText(body[field], TEXT_RULES[field]) : mode !== 'patch') {
      broken.push(field);
    }
  }
  if (Object.hasOwn(body, 'status') && !(POST_STATUSES as readonly unknown[]).includes(body.status)) {
    broken.push('status');
  }
  const publishedAt = Object.hasOwn(body, 'publishedAt')
    ? classifyPublishedAt(body.publishedAt, clock)
    : ({ kind: 'absent' } as const);
  if (publishedAt.kind === 'invalid') broken.push('publishedAt');
  if (broken.length > 0) {
    const pointer = broken.length === 1 && ['status', 'publishedAt'].includes(broken[0]) ? `/${broken[0]}` : undefined;
    return { kind: 'malformed', pointer };
  }
  if (publishedAt.kind === 'unclear') return { kind: 'unclear' };
  const fields = Object.fromEntries(FIELDS.filter((field) => Object.hasOwn(body, field)).map((f) => [f, body[f]]));
  const given = publishedAt.kind === 'instant' ? publishedAt.instant : publishedAt.kind === 'null' ? null : undefined;
  const state = resolveState(body.status as PostStatus | undefined, given, current, clock);
  return state === 'refused' ? { kind: 'refused' } : { kind: 'valid', post: { fields, ...state } };
}

/**
 * The state rules of contract §10. Without status the post keeps its own (a create's: published);
 * draft: publishedAt absent or null; published: publishedAt absent (kept when already published,
 * else now) or not in the future; scheduled: publishedAt in the future, or absent when the post is
 * already scheduled (it keeps its instant). `given` is never within an hour of the clock.
 */
export function resolveState(
  status: PostStatus | undefined,
  given: number | null | undefined,
  current: PostState | undefined,
  clock: number,
): Pick<PostState, 'status' | 'publishedAt'> | 'refused' {
  const next = status ?? current?.status ?? 'published';
  const kept = current?.status === next ? current.publishedAt : undefined;
  switch (next) {
    case 'draft':
      return given === undefined || given === null ? { status: next, publishedAt: null } : 'refused';
    case 'published':
      if (given === null) return 'refused';
      if (given !== undefined) return given < clock ? { status: next, publishedAt: given } : 'refused';
      return { status: next, publishedAt: kept ?? 'now' };
    case 'scheduled':
      if (given === null) return 'refused';
      if (given !== undefined) return given > clock ? { status: next, publishedAt: given } : 'refused';
      return kept === undefined ? 'refused' : { status: next, publishedAt: kept };
  }
}

/** Why a post the service answered is not `expected`, or null. */
export function postViolation(body: unknown, expected: ExpectedPost): string | null {
  const post = body as Record<string, unknown>;
  for (const [field, text] of Object.entries(expected.fields)) {
    if (post[field] !== text) return `${field} ${JSON.stringify(post[field])}, not the ${JSON.stringify(text)} sent`;
  }
  if (post.status !== expected.status) return `status ${String(post.status)}, expected ${expected.status}`;
  return publishedAtViolation(post.publishedAt, expected.publishedAt);
}

/** Why this publishedAt of an answer is not the expected one ('now': within ten minutes of now), or null. */
function publishedAtViolation(publishedAt: unknown, expected: number | null | 'now'): string | null {
  if (expected === null)
    return publishedAt === null ? null : `publishedAt ${JSON.stringify(publishedAt)}, expected null`;
  const wanted = expected === 'now' ? undefined : new Date(expected).toISOString();
  if (typeof publishedAt !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(publishedAt)) {
    return `publishedAt ${JSON.stringify(publishedAt)}, not an ISO 8601 UTC instant with milliseconds`;
  }
  if (wanted !== undefined) return publishedAt === wanted ? null : `publishedAt ${publishedAt}, expected ${wanted}`;
  return Math.abs(Date.parse(publishedAt) - Date.now()) < 10 * 60_000 ? null : `publishedAt ${publishedAt}, not now`;
}

/** A limit of a listing: decimal digits, not all zeros (larger ones are coerced to the maximum). */
export const isValidLimit = (limit: string): boolean => /^[0-9]+$/.test(limit) && !/^0+$/.test(limit);

/** Whether the query string of GET /posts is one the contract answers with 200 (spec §3 and §10, docs/api.md). */
export function isValidListQuery(queryString: string, issuedCursor: string): boolean {
  // Express's "simple" query parser is node:querystring: this is what the service sees.
  const query = parseQueryString(queryString);
  const allowed = ['limit', 'cursor', 'author', 'order', 'count', 'status'];
  for (const [key, value] of Object.entries(query)) {
    if (!allowed.includes(key) || typeof value !== 'string') return false;
  }
  const { limit, cursor, author, order, count, status } = query as Record<string, string | undefined>;
  if (limit !== undefined && !isValidLimit(limit)) return false;
  if (order !== undefined && order !== 'asc' && order !== 'desc') return false;
  if (count !== undefined && count !== 'true' && count !== 'false') return false;
  if (author !== undefined && !isValidText(author, TEXT_RULES.author)) return false;
  if (status !== undefined && !(POST_STATUSES as readonly string[]).includes(status)) return false;
  // A cursor belongs to the order and filters it was issued for (desc, no author, published: §10 says
  // status=published is the same listing as no status).
  if (
    cursor !== undefined &&
    (cursor !== issuedCursor ||
      (order ?? 'desc') !== 'desc' ||
      author !== undefined ||
      (status ?? 'published') !== 'published')
  ) {
    return false;
  }
  return true;
}

// The event types of contracts §9 and §10, and the pattern of a `type` list (events-query.dto.ts).
const EVENT_TYPES = [
  'post.created',
  'post.updated',
  'post.deleted',
  'post.published',
  'post.unpublished',
  'post.restored',
  'post.purged',
];

/**
 * Whether GET /events answers 200 to this query: only after, limit, type and wait, once each; after
 * an event id no later than `feedHead` (the feed only grows, so such an id stays valid), limit like
 * the posts' limit, type a comma-separated list of event types, wait 0-30 whole seconds.
 */
export function isValidEventsQuery(queryString: string, feedHead: number): boolean {
  const query = parseQueryString(queryString);
  for (const [key, value] of Object.entries(query)) {
    if (!['after', 'limit', 'type', 'wait'].includes(key) || typeof value !== 'string') return false;
  }
  const { after, limit, type, wait } = query as Record<string, string | undefined>;
  if (after !== undefined && (!/^[0-9]{1,15}$/.test(after) || Number(after) > feedHead)) return false;
  if (limit !== undefined && !isValidLimit(limit)) return false;
  if (type !== undefined && !type.split(',').every((name) => EVENT_TYPES.includes(name))) return false;
  if (wait !== undefined && !/^(?:[0-9]|[12][0-9]|30)$/.test(wait)) return false;
  return true;
}

/** 'valid': a positive decimal integer within 2^53 - 1 once percent-decoded (spec §2, docs/api.md). */
export function classifyId(raw: string): { valid: boolean; id?: number } {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return { valid: false };
  }
  const id = Number(decoded);
  return /^[1-9][0-9]*$/.test(decoded) && Number.isSafeInteger(id) ? { valid: true, id } : { valid: false };
}

const isOptionalWhitespace = (character: string): boolean => character === ' ' || character === '\t';

/**
 * A header's field value: what was sent without the optional whitespace (SP, HTAB) around it (RFC
 * 9110 §5.5), which is what Node hands to the app. Scanned from each end: /^[ \t]+|[ \t]+$/g
 * restarts at every space of a long run, which is quadratic.
 */
export function fieldValue(header: string): string {
  let start = 0;
  let end = header.length;
  while (start < end && isOptionalWhitespace(header[start])) start++;
  while (end > start && isOptionalWhitespace(header[end - 1])) end--;
  return header.slice(start, end);
}

/** Whether an Idempotency-Key header is usable: 1-255 printable ASCII characters, or that as an RFC 8941 string. */
export function isValidIdempotencyKey(header: string): boolean {
  const value = fieldValue(header);
  // Checked first: a longer header is refused (431) before anything reads it.
  if (value.length > MAX_IDEMPOTENCY_KEY_HEADER_LENGTH) return false;
  const quoted = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(value);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : value;
  return (quoted !== null || !value.startsWith('"')) && /^[\x21-\x7e]{1,255}$/.test(key);
}

export type EntityTagList =
  | { kind: 'any' }
  | { kind: 'malformed' }
  | {
      kind: 'tags';
      tags: Array<{ weak: boolean; opaque: string }>;
      /**
       * RFC 9110 §5.6.1.2 has a recipient accept empty list elements, and an opaque-tag may contain a
       * comma; the contract does not say whether the service goes that far, so 400 is allowed too.
       */
      lenient: boolean;
    };

/** RFC 9110 §13.1.1-2: `*` or a list of entity-tags, entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE (§8.8.3). */
export function readEntityTagList(value: string): EntityTagList {
  if (value === '*') return { kind: 'any' };
  // etagc = %x21 / %x23-7E / obs-text; Node reads header bytes as Latin-1, so obs-text is U+0080-U+00FF.
  const isEtagc = (character: string): boolean =>
    character !== '"' && character >= '\x21' && character <= '\xff' && character !== '\x7f';
  const tags: Array<{ weak: boolean; opaque: string }> = [];
  let lenient = false;
  let position = 0;
  let elementDue = true;
  for (;;) {
    while (position < value.length && isOptionalWhitespace(value[position])) position++;
    if (position === value.length || value[position] === ',') {
      if (elementDue) lenient = true;
      if (position === value.length) break;
      position++;
      elementDue = true;
      continue;
    }
    // Two tags need a comma between them.
    if (!elementDue) return { kind: 'malformed' };
    const weak = value.startsWith('W/', position);
    if (weak) position += 2;
    const start = position;
    if (value[position] !== '"') return { kind: 'malformed' };
    position++;
    while (position < value.length && isEtagc(value[position])) {
      if (value[position] === ',') lenient = true;
      position++;
    }
    if (value[position] !== '"') return { kind: 'malformed' };
    position++;
    tags.push({ weak, opaque: value.slice(start, position) });
    elementDue = false;
  }
  return { kind: 'tags', tags, lenient };
}

/** The statuses of a header over its limit (431), or else of its reading. */
function byLength(header: string, maxLength: number, otherwise: (value: string) => number[]): number[] {
  const value = fieldValue(header);
  return value.length > maxLength ? [431] : otherwise(value);
}

// --- strings -------------------------------------------------------------------------------------------

const SPECIAL_TEXTS = [
  '',
  ' ',
  '   ',
  '\t',
  '\n',
  '\r\n',
  '\u00a0\u2003',
  '\u3000',
  '\u200b',
  '\ufeff',
  '\u200f',
  '\u202e',
  '\u2066',
  '\u180e',
  'e\u0301',
  '\u0301',
  '\u0000',
  'a\u0000b',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u009f',
  '\ud800',
  'a\udc00',
  '\udbff\ud800',
  '\udc00\ud800',
  '\ud83d',
  '😀',
  '👨‍👩‍👧',
  '🏳️‍🌈',
  '\uffff',
  '\ufffe',
  '\ufffd',
  '\u{10ffff}',
  '\u{e0001}',
  'مرحبا بالعالم',
  '你好',
  '\\',
  '"',
  '/',
  '<script>alert(1)</script>',
  "'; DROP TABLE posts; --",
  '%00',
  '${title}',
  'null',
  'undefined',
];

/** Units repeated up to and past the length limits (1 / 100 / 200 / 100,000 code points). */
const REPEATED_UNITS = ['x', ' ', 'a ', 'é', 'e\u0301', '\u0301', '😀', '𝒜', '👨‍👩‍👧', '\u200f'];
const FIELD_LIMIT_COUNTS = [1, 2, 99, 100, 101, 199, 200, 201, 400];
const CONTENT_LIMIT_COUNTS = [99_999, 100_000, 100_001];

const textAtLimits = fc
  .tuple(fc.constantFrom(...REPEATED_UNITS), fc.constantFrom(...FIELD_LIMIT_COUNTS))
  .map(([unit, count]) => unit.repeat(count));

const textAtContentLimits = fc
  .tuple(fc.constantFrom('x', '😀', 'é', '\u0000'), fc.constantFrom(...CONTENT_LIMIT_COUNTS))
  .map(([unit, count]) => (unit === '\u0000' ? 'x'.repeat(count - 1) + unit : unit.repeat(count)));

/** Over the 1 MiB body limit on its own. */
const textOverBodyLimit = fc.constantFrom(BODY_LIMIT_BYTES + 1, 1_100_000).map((count) => 'y'.repeat(count));

const plainText = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 .,!?'-]{0,40}$/);

export const textArbitrary: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: plainText },
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_TEXTS) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(plainText, fc.constantFrom(...SPECIAL_TEXTS), fc.string({ maxLength: 4 }))
      .map((parts) => parts.join('')),
  },
  { weight: 3, arbitrary: textAtLimits },
);

/** 100,000 code points and more: rare, for they make every request that carries them slow. */
const largeText: fc.Arbitrary<string> = fc.oneof({ weight: 4, arbitrary: textAtContentLimits }, textOverBodyLimit);

/** Every UTF-16 unit as a \uXXXX escape: the same string, written the other way JSON allows. */
function escapeEveryUnit(text: string): string {
  let escaped = '"';
  for (let index = 0; index < text.length; index++) {
    escaped += `\\u${text.charCodeAt(index).toString(16).padStart(4, '0')}`;
  }
  return `${escaped}"`;
}

// JSON.stringify writes lone surrogates as \udXXX escapes (well-formed JSON.stringify, ES2019).
const jsonStringFragment = (text: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc
    .tuple(text, fc.boolean())
    .map(([value, escaped]) => (escaped && value.length <= 1_000 ? escapeEveryUnit(value) : JSON.stringify(value)));

// --- JSON values -----------------------------------------------------------------------------------------

const NUMBER_LITERALS = [
  '0',
  '-0',
  '1',
  '-1',
  '1.5',
  '1e3',
  '1E+2',
  '1e309',
  '-1e309',
  '1e-400',
  '123456789012345678901234567890',
  '9007199254740993',
];
const OTHER_LITERALS = [
  'null',
  'true',
  'false',
  '[]',
  '{}',
  '[""]',
  '["a title"]',
  '[null]',
  '{"a":1}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '[[[]]]',
];

const deepNesting = fc
  .tuple(fc.constantFrom(10, 64, 65, 100, 1_000, 5_000, 50_000), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '0' + '}'.repeat(depth),
  );

const hugeArray = fc
  .tuple(fc.constantFrom(1_000, 100_000), fc.constantFrom('0', '""', '{}', 'null', '"x"'))
  .map(([length, item]) => `[${new Array<string>(length).fill(item).join(',')}]`);

const nonStringFragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...NUMBER_LITERALS, ...OTHER_LITERALS) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
  { weight: 2, arbitrary: fc.bigInt().map(String) },
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: hugeArray },
);

const valueFragment: fc.Arbitrary<string> = fc.oneof(
  { weight: 60, arbitrary: jsonStringFragment(textArbitrary) },
  { weight: 20, arbitrary: nonStringFragment },
  { weight: 1, arbitrary: jsonStringFragment(largeText) },
);

// Members a post must not have: its other columns, the token, prototype keys (every name on
// Object.prototype), near-misses of the field names, and names that are odd as JSON Pointers.
const EXTRA_MEMBERS = [
  'id',
  'createdAt',
  'updatedAt',
  'ownerId',
  'owner_id',
  'version',
  'access_token',
  'prototype',
  ...Object.getOwnPropertyNames(Object.prototype),
  'toJSON',
  'then',
  'length',
  'Title',
  'AUTHOR',
  'title ',
  ' content',
  'tit\u0000le',
  'títle',
  '',
  'a/b~c',
  '\ud800',
  '😀',
  'published_at',
  'publishedat',
  'Status',
  'deletedAt',
  'revisedAt',
];

const memberName: fc.Arbitrary<string> = jsonStringFragment(
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...EXTRA_MEMBERS) },
    { weight: 1, arbitrary: fc.constantFrom(...BODY_MEMBERS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  ),
);

/**
 * A JSON object text with the post fields and state members present or not, odd values, extra
 * members and odd spacing.
 */
function jsonBodyText(mode: BodyMode, clock: number): fc.Arbitrary<string> {
  // fc.option gives null once in `freq` draws: a create or replace usually has the field.
  const field = fc.option(valueFragment, { freq: mode === 'patch' ? 2 : 8 });
  return fc
    .record({
      title: field,
      content: field,
      author: field,
      status: fc.option(jsonFragmentOf(statusValue), { freq: 2 }),
      publishedAt: fc.option(jsonFragmentOf(publishedAtValue(clock)), { freq: 2 }),
      extras: fc.oneof(
        { weight: 3, arbitrary: fc.constant<Array<[string, string]>>([]) },
        { weight: 1, arbitrary: fc.array(fc.tuple(memberName, valueFragment), { minLength: 1, maxLength: 3 }) },
      ),
      extrasFirst: fc.boolean(),
      spacing: fc.constantFrom('', '', '', ' ', '\n', '\t', ' \r\n '),
    })
    .map(({ title, content, author, status, publishedAt, extras, extrasFirst, spacing }) => {
      const fields = Object.entries({ title, content, author, status, publishedAt })
        .filter((entry): entry is [string, string] => entry[1] !== null)
        .map(([name, value]): [string, string] => [JSON.stringify(name), value]);
      // Duplicate names are allowed by JSON: the last one wins, so the order matters.
      const members = extrasFirst ? [...extras, ...fields] : [...fields, ...extras];
      const text = members.map(([name, value]) => `${name}${spacing}:${spacing}${value}`).join(`,${spacing}`);
      return `${spacing}{${spacing}${text}${spacing}}${spacing}`;
    });
}

const validFieldText = fc.oneof(
  plainText,
  fc.constantFrom('Hello 👋🏽 你好 مرحبا', 'Zoë 𝒜', '\u200fRTL\u200f', 'e\u0301'),
  fc.constantFrom('😀'.repeat(100), 'é'.repeat(100)),
);

/**
 * Fields the contract accepts (some of them for a patch) with generated state members: bodies where
 * the state rules of §10, not the field rules, decide.
 */
function stateBodyText(mode: BodyMode, clock: number): fc.Arbitrary<string> {
  const state = (value: fc.Arbitrary<unknown>) => fc.option(jsonFragmentOf(value), { freq: 4 });
  return fc
    .record({
      post: fc.record({ title: validFieldText, content: validFieldText, author: validFieldText }),
      fields: mode === 'patch' ? fc.subarray<Field>([...FIELDS]) : fc.constant<Field[]>([...FIELDS]),
      status: state(statusValue),
      publishedAt: state(publishedAtValue(clock)),
    })
    .map(({ post, fields, status, publishedAt }) => {
      const members = fields.map((name) => `${JSON.stringify(name)}:${JSON.stringify(post[name])}`);
      if (status !== null) members.push(`"status":${status}`);
      if (publishedAt !== null) members.push(`"publishedAt":${publishedAt}`);
      return `{${members.join(',')}}`;
    });
}

/**
 * A body the contract accepts, whatever the state of the post it is sent to: every header-level case
 * sends one, so only the header decides.
 */
function validBody(mode: BodyMode, clock: number): fc.Arbitrary<Buffer> {
  const post = fc.record({ title: validFieldText, content: validFieldText, author: validFieldText });
  const fields =
    mode === 'patch'
      ? fc
          .tuple(post, fc.subarray([...FIELDS], { minLength: 1 }))
          .map(([value, names]) => Object.fromEntries(names.map((name) => [name, value[name]])))
      : post;
  return fc
    .tuple(fields, anyStateMembers(clock))
    .map(([value, state]) => Buffer.from(JSON.stringify({ ...value, ...state })));
}

// --- headers ----------------------------------------------------------------------------------------------

/** Characters node:http lets a header value carry (HTAB, SP, VCHAR, obs-text); others never reach the service. */
const headerCharacter = fc
  .oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
    { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
    { weight: 1, arbitrary: fc.constant(0x09) },
  )
  .map((code) => String.fromCharCode(code));

export const headerText = (maxLength: number): fc.Arbitrary<string> => fc.string({ unit: headerCharacter, maxLength });

export const requestIdHeader = fc.option(
  fc.oneof(headerText(40), fc.constantFrom('a'.repeat(128), 'a'.repeat(129), 'x"y', 'trace-01', '../../etc')),
  { freq: 3 },
);

// --- requests -----------------------------------------------------------------------------------------

export function request(fields: FuzzRequest): FuzzRequest {
  return Object.assign(fields, { [fc.toStringMethod]: () => describeRequest(fields) });
}

/** One line a person can paste into a bug report: method, path, headers and (the start of) the body. */
export function describeRequest(fuzz: FuzzRequest): string {
  const headers = visible(JSON.stringify(fuzz.headers)).replace(/psk_[A-Za-z0-9_-]{49}/g, '<token>');
  const setup =
    fuzz.setup === undefined
      ? ''
      : ` (to a post made ${fuzz.setup.state}, patched ${fuzz.setup.patches} times${fuzz.setup.trashed ? ', then deleted' : ''})`;
  if (fuzz.body === undefined) return `${fuzz.method} ${preview(fuzz.path)} ${headers}${setup}`;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(fuzz.body);
  return `${fuzz.method} ${preview(fuzz.path)} ${headers} body (${fuzz.body.length} bytes): ${visible(JSON.stringify(preview(text)))}${setup}`;
}

/** Invisible and look-alike characters (controls, format characters, spaces other than SP) as \uXXXX. */
function visible(text: string): string {
  return text.replace(/(?! )[\p{C}\p{Z}]/gu, (character) =>
    Array.from(
      { length: character.length },
      (_, index) => `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`,
    ).join(''),
  );
}

function preview(text: string): string {
  return text.length <= 600 ? text : `${text.slice(0, 400)}…(${text.length - 500} more)…${text.slice(-100)}`;
}

export const bearer = (token: string): string => `Bearer ${token}`;
export const json = { 'content-type': 'application/json' };

type Target = 'own' | 'other' | 'deleted';

function targetPath(targets: FuzzTargets): fc.Arbitrary<{ target: Target; id: number }> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...targets.ownPostIds).map((id) => ({ target: 'own' as const, id })) },
    { weight: 1, arbitrary: fc.constantFrom(...targets.otherPostIds).map((id) => ({ target: 'other' as const, id })) },
    { weight: 1, arbitrary: fc.constant({ target: 'deleted' as const, id: targets.deletedPostId }) },
  );
}

/** What a write to an existing post with a valid body and NEVER_MATCHING_ETAG gets: 412, after 403 and 404. */
const STATUS_OF_VALID_WRITE: Record<Target, number> = { own: 412, other: 403, deleted: 404 };

/** The fixtures' state: published when they were made, after the clock. */
const FIXTURE_STATE: PostState = { status: 'published', publishedAt: 'now' };

/**
 * The statuses a write with this body may get, and what they must carry. A create, and a write to a
 * setup post (`fixture` undefined: no precondition in the way), get 400 or succeed, exactly. A write
 * aimed at a fixture carries NEVER_MATCHING_ETAG, so at best it gets the fixture's own refusal (412,
 * 403, 404); a malformed body is refused before the post is looked at, but a body the state rules
 * refuse (draft with a publishedAt, ...) may be refused after it: those rules need the post's current
 * state, read under its lock, and RFC 9110 §13.2.1 lets preconditions be evaluated before the content
 * is processed. The contract does not order them, so either is allowed there.
 */
function bodyOutcome(
  verdict: Exclude<BodyVerdict, { kind: 'unclear' }>,
  success: number,
  fixture: Target | undefined,
): Pick<FuzzRequest, 'expected' | 'problems' | 'valid' | 'successBodyViolation'> {
  switch (verdict.kind) {
    case 'malformed':
      return {
        expected: [400],
        valid: false,
        problems:
          verdict.pointer === undefined
            ? undefined
            : { 400: { type: 'validation-failed', error: { pointer: verdict.pointer } } },
      };
    case 'refused':
      return {
        expected: fixture === undefined ? [400] : [400, STATUS_OF_VALID_WRITE[fixture]],
        valid: false,
        problems: { 400: { type: 'validation-failed', error: { pointer: '/publishedAt' } } },
      };
    case 'valid':
      return fixture === undefined
        ? { expected: [success], valid: true, successBodyViolation: (body) => postViolation(body, verdict.post) }
        : { expected: [STATUS_OF_VALID_WRITE[fixture]], valid: false };
  }
}

type BodyTarget = { target: Target; id: number } | { target: 'setup'; state: SetupState };

function jsonBodyRequests(category: Category, mode: BodyMode, targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const method = { create: 'POST', replace: 'PUT', patch: 'PATCH' }[mode];
  const target: fc.Arbitrary<BodyTarget> = fc.oneof(
    { weight: 1, arbitrary: targetPath(targets) },
    { weight: 1, arbitrary: setupState.map((state) => ({ target: 'setup' as const, state })) },
  );
  return fc
    .record({
      text: fc.oneof(
        { weight: 3, arbitrary: jsonBodyText(mode, targets.clock) },
        { weight: 1, arbitrary: stateBodyText(mode, targets.clock) },
      ),
      target,
      // What a write to a setup post sends: it is at version 1.
      ifMatch: fc.constantFrom(undefined, '*', '"{id}.1"', 'W/"x", "{id}.1"'),
      contentType: fc.constantFrom(
        'application/json',
        mode === 'patch' ? 'application/merge-patch+json' : 'application/json; charset=utf-8',
      ),
      requestId: requestIdHeader,
    })
    .map(({ text, target, ifMatch, contentType, requestId }): FuzzRequest | null => {
      const body = Buffer.from(text);
      const setup = mode !== 'create' && target.target === 'setup' ? target : undefined;
      const fixture = mode === 'create' || target.target === 'setup' ? undefined : target;
      const current = setup ? setupPostState(setup.state, targets.clock) : fixture ? FIXTURE_STATE : undefined;
      const verdict = classifyPostBody(body, mode, current, targets.clock);
      if (verdict.kind === 'unclear') return null;
      const headers: Record<string, string> = {
        authorization: bearer(targets.writerToken),
        'content-type': contentType,
      };
      if (requestId !== null) headers['x-request-id'] = requestId;
      if (fixture) headers['if-match'] = NEVER_MATCHING_ETAG;
      else if (setup && ifMatch !== undefined) headers['if-match'] = ifMatch;
      const outcome =
        body.length > BODY_LIMIT_BYTES
          ? { expected: [413], valid: false }
          : bodyOutcome(verdict, mode === 'create' ? 201 : 200, fixture?.target);
      return request({
        category,
        method,
        path: fixture ? `/posts/${fixture.id}` : setup ? '/posts/{id}' : '/posts',
        headers,
        body,
        ...outcome,
        setup: setup && { state: setup.state, patches: 0, trashed: false },
        successEffect: setup && 'keeps-revision',
      });
    })
    .filter((fuzz): fuzz is FuzzRequest => fuzz !== null);
}

const RAW_TEXTS = [
  '',
  ' ',
  '\r\n',
  'null',
  'true',
  '42',
  '-0',
  '"a string"',
  '[]',
  '[{"title":"t","content":"c","author":"a"}]',
  '{',
  '}',
  '{"title":"t",}',
  "{'title':'t','content':'c','author':'a'}",
  '{title:"t",content:"c",author:"a"}',
  '{"title":"t","content":"c","author":"a"} x',
  '{"title":"t","content":"c","author":"a"}}',
  '{"title":"t","content":"c","author":"a"}{}',
  '{"title":NaN,"content":"c","author":"a"}',
  '{"title":Infinity,"content":"c","author":"a"}',
  '{"title":"t"/* comment */,"content":"c","author":"a"}',
  '{"title":"\\x41","content":"c","author":"a"}',
  '{"title":"\\u12","content":"c","author":"a"}',
  '{"title":"a\u0001b","content":"c","author":"a"}',
  '{"title":01,"content":"c","author":"a"}',
  '{"title":.5,"content":"c","author":"a"}',
  '{"title":+1,"content":"c","author":"a"}',
  '{"title":0x10,"content":"c","author":"a"}',
  'title=t&content=c&author=a',
  '<post><title>t</title></post>',
  '\ufeff{"title":"t","content":"c","author":"a"}',
  '\ufeff\ufeff{"title":"t","content":"c","author":"a"}',
  '\u00a0{"title":"t","content":"c","author":"a"}',
];

/** Byte sequences that are not UTF-8: a bad continuation, a CESU-8 surrogate, an overlong '/', past U+10FFFF. */
const INVALID_UTF8 = [[0xc3, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]];

interface RawBody {
  body: Buffer;
  contentEncoding?: string;
}

const rawBody = (clock: number): fc.Arbitrary<RawBody> =>
  fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ body: Buffer.from(bytes) })),
    fc.string({ unit: 'binary', maxLength: 200 }).map((text) => ({ body: Buffer.from(text) })),
    fc.constantFrom(...RAW_TEXTS).map((text) => ({ body: Buffer.from(text) })),
    jsonBodyText('create', clock)
      .chain((text) => fc.tuple(fc.constant(text), fc.nat({ max: text.length })))
      .map(([text, end]) => ({ body: Buffer.from(text.slice(0, end)) })),
    fc.tuple(plainText, fc.constantFrom(...INVALID_UTF8), plainText).map(([before, bytes, after]) => ({
      body: Buffer.concat([
        Buffer.from(`{"title":"${before}`),
        Buffer.from(bytes),
        Buffer.from(`${after}","content":"c","author":"a"}`),
      ]),
    })),
    fc.constantFrom<BufferEncoding>('utf16le', 'latin1').map((encoding) => ({
      body: Buffer.from('{"title":"Zoë","content":"c","author":"a"}', encoding),
    })),
    fc
      .tuple(
        fc.oneof(jsonBodyText('create', clock), fc.constantFrom(...RAW_TEXTS)),
        fc.constantFrom('gzip', 'gzip-header-only'),
      )
      .map(([text, how]) => ({
        body: how === 'gzip' ? gzipSync(text) : Buffer.from(text),
        contentEncoding: 'gzip',
      })),
    fc
      .tuple(
        fc.constantFrom('compress', 'x-garbage', 'gzip, gzip', 'GZIP', 'identity', ''),
        fc.constantFrom(...RAW_TEXTS),
      )
      .map(([contentEncoding, text]) => ({ body: Buffer.from(text), contentEncoding })),
  );

/** The body the service reads, after Content-Encoding; undefined when it cannot be read at all. */
function decodedBody({ body, contentEncoding }: RawBody): Buffer | undefined {
  // An empty Content-Encoding lists no coding at all.
  if (contentEncoding === undefined || contentEncoding === '' || contentEncoding === 'identity') return body;
  if (contentEncoding.toLowerCase() !== 'gzip') return undefined;
  try {
    return gunzipSync(body);
  } catch {
    return undefined;
  }
}

function rawBodyRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(
      rawBody(targets.clock),
      fc.constantFrom<BodyMode>('create', 'create', 'replace', 'patch'),
      fc.constantFrom(...targets.ownPostIds),
    )
    .map(([raw, mode, id]): FuzzRequest | null => {
      const decoded = decodedBody(raw);
      const tooLarge =
        raw.body.length > BODY_LIMIT_BYTES || (decoded !== undefined && decoded.length > BODY_LIMIT_BYTES);
      const verdict =
        decoded === undefined || tooLarge
          ? undefined
          : classifyPostBody(decoded, mode, mode === 'create' ? undefined : FIXTURE_STATE, targets.clock);
      if (verdict?.kind === 'unclear') return null;
      const headers: Record<string, string> = { authorization: bearer(targets.writerToken), ...json };
      if (raw.contentEncoding !== undefined) headers['content-encoding'] = raw.contentEncoding;
      if (mode !== 'create') headers['if-match'] = NEVER_MATCHING_ETAG;
      // The limit applies to the inflated size; an unknown Content-Encoding is 415; unreadable or
      // invalid bodies are 400.
      const outcome = tooLarge
        ? { expected: [413], valid: false }
        : verdict === undefined
          ? { expected: [400, 415], valid: false }
          : bodyOutcome(verdict, 201, mode === 'create' ? undefined : 'own');
      return request({
        category: 'raw-body',
        method: { create: 'POST', replace: 'PUT', patch: 'PATCH' }[mode],
        path: mode === 'create' ? '/posts' : `/posts/${id}`,
        headers,
        body: raw.body,
        ...outcome,
      });
    })
    .filter((fuzz): fuzz is FuzzRequest => fuzz !== null);
}

const OTHER_MEDIA_TYPES = [
  'text/plain',
  'text/json',
  'application/xml',
  'application/jsonx',
  'application/json-patch+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/*',
  '*/*',
  'json',
  'application',
  'application/',
  '/json',
  'application/json/x',
  'application/json, text/plain',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=iso-8859-1',
  'application/json; charset="us-ascii"',
  'application/json; charset=utf-8; charset=latin1',
  'application/json; charset',
  'application/json charset=utf-8',
  'application /json',
  'application/json; =x',
];

/** [Content-Type or undefined for none, whether the method accepts it]. */
function contentTypes(method: string): fc.Arbitrary<[string | undefined, boolean]> {
  const acceptedTypes =
    method === 'PATCH' ? ['application/json', 'application/merge-patch+json'] : ['application/json'];
  const accepted = fc
    .tuple(
      fc.constantFrom(...acceptedTypes).chain((type) => fc.mixedCase(fc.constant(type))),
      fc.constantFrom('', ';charset=utf-8', '; charset=UTF-8', '; Charset="utf-8"', '; charset=utf-8; q=1', '; x=y'),
    )
    .map(([type, parameters]): [string, boolean] => [type + parameters, true]);
  const refused = fc.oneof(
    fc.constantFrom(...OTHER_MEDIA_TYPES),
    method === 'PATCH' ? fc.constant('text/plain') : fc.constant('application/merge-patch+json'),
    headerText(60).filter((text) => !/json/i.test(text)),
  );
  return fc.oneof(
    { weight: 1, arbitrary: accepted },
    { weight: 3, arbitrary: refused.map((type): [string, boolean] => [type, false]) },
    { weight: 1, arbitrary: fc.constant<[undefined, boolean]>([undefined, false]) },
  );
}

function contentTypeRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc
    .constantFrom<BodyMode>('create', 'replace', 'patch')
    .chain((mode) => {
      const method = { create: 'POST', replace: 'PUT', patch: 'PATCH' }[mode];
      return fc.tuple(fc.constant(mode), fc.constant(method), contentTypes(method), validBody(mode, targets.clock));
    })
    .map(([mode, method, [contentType, accepted], body]) => {
      const headers: Record<string, string> = { authorization: bearer(targets.writerToken) };
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (mode !== 'create') headers['if-match'] = NEVER_MATCHING_ETAG;
      const success = mode === 'create' ? 201 : STATUS_OF_VALID_WRITE.own;
      return request({
        category: 'content-type',
        method,
        path: mode === 'create' ? '/posts' : `/posts/${targets.ownPostIds[0]}`,
        headers,
        body,
        valid: accepted && mode === 'create',
        expected: [accepted ? success : 415],
      });
    });
}

type Principal = 'none' | 'reader' | 'writer';

function authorizationHeaders(targets: FuzzTargets): fc.Arbitrary<[string | undefined, Principal]> {
  const token = targets.writerToken;
  const flipped = fc
    .nat({ max: token.length - 1 })
    .map((index) => token.slice(0, index) + (token[index] === 'A' ? 'B' : 'A') + token.slice(index + 1));
  const malformed = fc.oneof(
    fc.constantFrom(
      '',
      'Bearer',
      'Bearer ',
      `Bearer  ${token}`,
      `Bearer\t${token}`,
      token,
      `Basic ${token}`,
      `Basic ${Buffer.from(`writer:${token}`).toString('base64')}`,
      `Token ${token}`,
      `Bearer:${token}`,
      `Bearer=${token}`,
      `Bearer "${token}"`,
      `Bearer ${token} ${token}`,
      `Bearer ${token},Bearer ${token}`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer ${token}x`,
      `Bearer ${token.toUpperCase()}`,
      `Bearer ${targets.readerToken.slice(0, -2)}`,
      'Bearer psk_',
      `Bearer psk_${'A'.repeat(49)}`,
      'Bearer a.b.c',
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln',
      `Bearer ${'x'.repeat(8_000)}`,
      'Bearer \u00e9\u00ff',
      'Digest username="x"',
      'Negotiate YII=',
      'null',
      'undefined',
    ),
    flipped.map((value) => `Bearer ${value}`),
    headerText(80),
    headerText(80).map((value) => `Bearer ${value}`),
  );
  return fc.oneof(
    { weight: 6, arbitrary: malformed.map((value): [string, Principal] => [value, 'none']) },
    { weight: 1, arbitrary: fc.constant<[undefined, Principal]>([undefined, 'none']) },
    // The scheme is case-insensitive (RFC 9110 §11.1): these are the writer.
    {
      weight: 1,
      arbitrary: fc
        .mixedCase(fc.constant('bearer'))
        .map((scheme): [string, Principal] => [`${scheme} ${token}`, 'writer']),
    },
    { weight: 1, arbitrary: fc.constant<[string, Principal]>([bearer(targets.readerToken), 'reader']) },
  );
}

type Route = 'list' | 'read' | 'create' | 'replace' | 'patch' | 'delete';

function authorizationRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      route: fc.constantFrom<Route>('list', 'read', 'create', 'replace', 'patch', 'delete'),
      authorization: authorizationHeaders(targets),
      replacement: validBody('replace', targets.clock),
      patch: validBody('patch', targets.clock),
      id: fc.constantFrom(...targets.ownPostIds),
    })
    .map(({ route, authorization: [authorization, principal], replacement, patch, id }) => {
      const headers: Record<string, string> = {};
      if (authorization !== undefined) headers.authorization = authorization;
      const write = route !== 'list' && route !== 'read';
      if (write && route !== 'delete') Object.assign(headers, json);
      if (write && route !== 'create') headers['if-match'] = NEVER_MATCHING_ETAG;
      const successes: Record<Route, number> = {
        list: 200,
        read: 200,
        create: 201,
        replace: 412,
        patch: 412,
        delete: 412,
      };
      const expected = principal === 'none' ? [400, 401] : principal === 'reader' && write ? [403] : [successes[route]];
      return request({
        category: 'authorization',
        method: { list: 'GET', read: 'GET', create: 'POST', replace: 'PUT', patch: 'PATCH', delete: 'DELETE' }[route],
        path: route === 'list' ? '/posts' : route === 'create' ? '/posts' : `/posts/${id}`,
        headers,
        body: route === 'create' || route === 'replace' ? replacement : route === 'patch' ? patch : undefined,
        valid: expected[0] < 300,
        expected,
      });
    });
}

/** About the size of a request's head: request line, headers, and what node:http adds (Host, Connection, Content-Length). */
function headBytes(fuzz: FuzzRequest): number {
  // Header values are Latin-1 (one byte a character): node:http writes them so.
  const headers = Object.entries(fuzz.headers).reduce(
    (bytes, [name, value]) => bytes + name.length + value.length + 4,
    0,
  );
  return fuzz.method.length + fuzz.path.length + headers + 200;
}

/** A run of optional whitespace (SP, HTAB or both) of a length in [minLength, maxLength]. */
const whitespaceRun = (minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc
    .tuple(fc.integer({ min: minLength, max: maxLength }), fc.constantFrom(' ', '\t', ' \t'))
    .map(([length, unit]) => unit.repeat(length).slice(0, length));

/** If-Match or If-None-Match values around the current ETag "<id>.1" of a post, short and long. */
function entityTagHeaders(id: number): fc.Arbitrary<string> {
  const current = `"${id}.1"`;
  // Near misses of the current ETag: leading zeros, other versions, the weak form.
  const nearMiss = fc
    .record({
      weak: fc.constantFrom('', '', 'W/', 'w/'),
      idZeros: fc.nat({ max: 2 }),
      versionZeros: fc.nat({ max: 2 }),
      version: fc.constantFrom('1', '0', '2', '10', '1.0', '1e0', '99999999999999999999'),
      otherId: fc.constantFrom(id, id + 1, 0),
    })
    .map(
      ({ weak, idZeros, versionZeros, version, otherId }) =>
        `${weak}"${'0'.repeat(idZeros)}${otherId}.${'0'.repeat(versionZeros)}${version}"`,
    );
  const garbage = fc.oneof(
    headerText(40),
    fc.constantFrom(
      '',
      '"',
      '""',
      'W/',
      'W/""',
      '"a"b"',
      '"x" "y"',
      '"a,b"',
      ',',
      ', ,',
      `${current},`,
      '*, *',
      '**',
      '"*"',
      '"\u0080\u00ff"',
      `"${id}.1`,
      `${id}.1`,
      `\u00a0${current}`,
      `${current}\u00a0`,
      `"x",\u00a0${current}`,
      '\u00a0*',
      `'${id}.1'`,
      `"${'1.1", "'.repeat(400)}"`,
      `"${'x'.repeat(5_000)}"`,
    ),
  );
  const member = fc.oneof(
    { weight: 2, arbitrary: nearMiss },
    { weight: 2, arbitrary: garbage },
    { weight: 1, arbitrary: fc.constantFrom(current, `W/${current}`, '*') },
  );
  const list = fc
    .array(member, { minLength: 1, maxLength: 4 })
    .chain((members) => fc.constantFrom(',', ', ', ' ,\t').map((separator) => members.join(separator)));
  return fc.oneof({ weight: 3, arbitrary: list }, { weight: 2, arbitrary: longEntityTagHeaders(id, member) });
}

/** Values with long runs of whitespace, and lists of hundreds of tags up to, at and past 4,096 characters. */
function longEntityTagHeaders(id: number, member: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const current = `"${id}.1"`;
  const tag = fc.constantFrom(
    `"${id + 1}.1"`,
    `"${id}.2"`,
    `W/${current}`,
    `"${id}.10"`,
    '"0.0"',
    `"${'x'.repeat(30)}"`,
  );
  // Whitespace around a field value is not part of it (RFC 9110 §5.5): what is inside decides.
  const wrapped = fc.tuple(whitespaceRun(0, 7_000), member, whitespaceRun(0, 7_000)).map((parts) => parts.join(''));
  // Whitespace where no list allows it: 400 up to the limit, 431 past it.
  const spacedOut = fc
    .tuple(fc.constantFrom('a', current, '"', 'W/'), whitespaceRun(1_000, 15_000), fc.constantFrom('b', current, '"'))
    .map((parts) => parts.join(''));
  const longList = fc
    .record({
      length: fc.oneof(fc.integer({ min: 4_094, max: 4_098 }), fc.integer({ min: 1_000, max: 13_000 })),
      tags: fc.array(tag, { minLength: 1, maxLength: 8 }),
      separator: fc.constantFrom(',', ', ', ' ,\t'),
      // At the end, so that only a reading of the whole list finds it.
      last: fc.oneof(tag, fc.constantFrom(current, `W/${current}`, `${id}.1`, '"x" "y"', '')),
      padding: fc.constantFrom(' ', '\t'),
      around: whitespaceRun(0, 1_000),
    })
    .map(({ length, tags, separator, last, padding, around }) => {
      const members: string[] = [];
      let used = last.length;
      for (let index = 0; used + separator.length + tags[index % tags.length].length <= length; index++) {
        members.push(tags[index % tags.length]);
        used += separator.length + tags[index % tags.length].length;
      }
      const text = [...members, last].join(separator);
      // The rest of the length as whitespace after the first comma, where a list allows it.
      const comma = text.indexOf(',') + 1;
      return around + text.slice(0, comma) + padding.repeat(length - text.length) + text.slice(comma) + around;
    });
  return fc.oneof(wrapped, spacedOut, longList);
}

/** If-Match values that no write can satisfy: neither * nor the current ETag, compared strongly. */
function ifMatchHeaders(id: number): fc.Arbitrary<string> {
  const current = `"${id}.1"`;
  // Read whatever the length: were a value the oracle finds too long parsed after all, it must still
  // not let a write through and change a fixture.
  return entityTagHeaders(id).filter((header) => {
    const list = readEntityTagList(fieldValue(header));
    return (
      list.kind === 'malformed' ||
      (list.kind === 'tags' && !list.tags.some((tag) => !tag.weak && tag.opaque === current))
    );
  });
}

function ifMatchRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const target = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...targets.ownPostIds).map((id) => ({ own: true, id })) },
    { weight: 1, arbitrary: fc.constantFrom(...targets.otherPostIds).map((id) => ({ own: false, id })) },
  );
  return fc
    .record({
      target,
      method: fc.constantFrom('PUT', 'PATCH', 'DELETE'),
      replacement: validBody('replace', targets.clock),
      patch: validBody('patch', targets.clock),
    })
    .chain((fields) => fc.tuple(fc.constant(fields), ifMatchHeaders(fields.target.id)))
    .map(
      ([
        {
          target: { own, id },
          method,
          replacement,
          patch,
        },
        ifMatch,
      ]) =>
        request({
          category: 'if-match',
          method,
          path: `/posts/${id}`,
          headers: {
            authorization: bearer(targets.writerToken),
            'if-match': ifMatch,
            ...(method === 'DELETE' ? {} : json),
          },
          body: method === 'PUT' ? replacement : method === 'PATCH' ? patch : undefined,
          valid: false,
          expected: byLength(ifMatch, MAX_ENTITY_TAG_HEADER_LENGTH, (value) => {
            const list = readEntityTagList(value);
            // A malformed list is 400; the contract does not order it against the ownership check (403).
            if (list.kind === 'malformed') return own ? [400] : [400, 403];
            // A well-formed list that does not match is 412, after 403 for another's post.
            const refused = own ? 412 : 403;
            return list.kind === 'tags' && list.lenient ? [400, refused] : [refused];
          }),
          problems: { 431: { type: 'request-header-fields-too-large', error: { parameter: 'If-Match' } } },
        }),
    )
    .filter((fuzz) => headBytes(fuzz) <= MAX_HEAD_BYTES);
}

function ifNoneMatchRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      target: targetPath(targets),
      token: fc.constantFrom(targets.readerToken, targets.writerToken),
    })
    .chain((fields) => fc.tuple(fc.constant(fields), fc.option(entityTagHeaders(fields.target.id), { freq: 20 })))
    .map(([{ target, token }, ifNoneMatch]) => {
      const current = `"${target.id}.1"`;
      const headers: Record<string, string> = { authorization: bearer(token) };
      if (ifNoneMatch !== null) headers['if-none-match'] = ifNoneMatch;
      const expected =
        ifNoneMatch === null
          ? [target.target === 'deleted' ? 404 : 200]
          : byLength(ifNoneMatch, MAX_ENTITY_TAG_HEADER_LENGTH, (value) => {
              const list = readEntityTagList(value);
              // The header is read before the post: malformed is 400 even when the post is gone.
              if (list.kind === 'malformed') return [400];
              const lenient = list.kind === 'tags' && list.lenient ? [400] : [];
              if (target.target === 'deleted') return [...lenient, 404];
              // Weak comparison (RFC 9110 §8.8.3.2): W/"<id>.1" matches as well.
              const matches = list.kind === 'any' || list.tags.some((tag) => tag.opaque === current);
              return [...lenient, matches ? 304 : 200];
            });
      return request({
        category: 'if-none-match',
        method: 'GET',
        path: `/posts/${target.id}`,
        headers,
        valid: expected.includes(200),
        expected,
        problems: { 431: { type: 'request-header-fields-too-large', error: { parameter: 'If-None-Match' } } },
      });
    })
    .filter((fuzz) => headBytes(fuzz) <= MAX_HEAD_BYTES);
}

function idempotencyKeyRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const shortKey = fc.oneof(
    headerText(300),
    fc.constantFrom(
      '',
      ' ',
      '\t',
      '""',
      '"',
      '"abc',
      'abc"',
      '"a b"',
      '"a\\"b"',
      '"a\\b"',
      'a b',
      'a,b',
      'k'.repeat(255),
      'k'.repeat(256),
      `"${'k'.repeat(255)}"`,
      `"${'k'.repeat(256)}"`,
      // 255 escaped characters: 512 characters between the quotes, still a usable key; 256 are not.
      `"${'\\\\'.repeat(255)}"`,
      `"${'\\"'.repeat(255)}"`,
      `"${'\\\\'.repeat(256)}"`,
      'caf\u00e9',
      '\u00ff',
      'abc\u00a0',
      '\u00a0abc',
      "~!@#$%^&*()_+{}|:<>?`-=[]\\;',./",
    ),
  );
  const longKey = fc.oneof(
    fc.integer({ min: 250, max: 15_000 }).map((length) => 'k'.repeat(length)),
    // Whitespace around the field value is not part of it (RFC 9110 §5.5): a usable key.
    fc
      .tuple(
        whitespaceRun(0, 7_000),
        fc.constantFrom('k', 'a-b_c.d~1', '"quoted"', `"${'\\\\'.repeat(255)}"`),
        whitespaceRun(0, 7_000),
      )
      .map((parts) => parts.join('')),
    // Whitespace inside, which no key may hold: 400 up to 1,024 characters, 431 past them.
    fc
      .tuple(fc.constantFrom('k', '"'), whitespaceRun(1, 15_000), fc.constantFrom('k', '"'))
      .map((parts) => parts.join('')),
    fc
      .tuple(fc.integer({ min: 1_020, max: 1_030 }), fc.constantFrom('k', ' ', '\t'))
      .map(([length, unit]) => `k${unit.repeat(length - 2)}k`),
  );
  const key = fc.oneof({ weight: 3, arbitrary: shortKey }, { weight: 2, arbitrary: longKey });
  return fc
    .tuple(key, validBody('create', targets.clock))
    .map(([idempotencyKey, body]) => {
      const valid = isValidIdempotencyKey(idempotencyKey);
      return request({
        category: 'idempotency-key',
        method: 'POST',
        path: '/posts',
        headers: { authorization: bearer(targets.writerToken), ...json, 'idempotency-key': idempotencyKey },
        body,
        valid,
        // A usable key that an earlier request sent with another body is 422 (idempotency-key-reused).
        expected: byLength(idempotencyKey, MAX_IDEMPOTENCY_KEY_HEADER_LENGTH, () => (valid ? [201, 422] : [400])),
        problems: { 431: { type: 'request-header-fields-too-large', error: { parameter: 'Idempotency-Key' } } },
      });
    })
    .filter((fuzz) => headBytes(fuzz) <= MAX_HEAD_BYTES);
}

// --- API key expiry ------------------------------------------------------------------------------------

const DAY_MS = 86_400_000;

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const marchYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(marchYear / 400);
  const yearOfEra = marchYear - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** docs/api.md: an expiry comes before the year 10000. */
const LATEST_EXPIRY_MS = daysFromCivil(10_000, 1, 1) * DAY_MS - 1;

/**
 * The instant (in milliseconds, finer digits cut) that an RFC 3339 date-time names as the
 * contract restricts it: YYYY-MM-DDTHH:MM:SS, 1-9 fraction digits, Z or ±HH:MM, T and Z in either
 * case, a date and time that exist (no leap second), a year from 1000 to 9999. Undefined otherwise.
 */
export function rfc3339Instant(text: string): number | undefined {
  // ASCII digits only, read at fixed places.
  const digits = (start: number, count: number): number | undefined => {
    if (start + count > text.length) return undefined;
    let value = 0;
    for (let index = start; index < start + count; index++) {
      const digit = text.charCodeAt(index) - 0x30;
      if (digit < 0 || digit > 9) return undefined;
      value = value * 10 + digit;
    }
    return value;
  };
  const isOneOf = (index: number, characters: string): boolean =>
    index < text.length && characters.includes(text[index]);
  if (!(isOneOf(4, '-') && isOneOf(7, '-') && isOneOf(10, 'Tt') && isOneOf(13, ':') && isOneOf(16, ':'))) {
    return undefined;
  }
  const year = digits(0, 4);
  const month = digits(5, 2);
  const day = digits(8, 2);
  const hour = digits(11, 2);
  const minute = digits(14, 2);
  const second = digits(17, 2);
  if (year === undefined || month === undefined || day === undefined) return undefined;
  if (hour === undefined || minute === undefined || second === undefined) return undefined;
  let position = 19;
  let milliseconds = 0;
  if (isOneOf(position, '.')) {
    const start = ++position;
    while (digits(position, 1) !== undefined) position++;
    if (position - start < 1 || position - start > 9) return undefined;
    // Whole milliseconds only: a sum with a fraction of one is not exact at 4 * 10^12.
    milliseconds = Number(text.slice(start, Math.min(position, start + 3)).padEnd(3, '0'));
  }
  let offsetMinutes = 0;
  if (!(position === text.length - 1 && isOneOf(position, 'Zz'))) {
    const offsetHour = digits(position + 1, 2);
    const offsetMinute = digits(position + 4, 2);
    if (position + 6 !== text.length || !isOneOf(position, '+-') || !isOneOf(position + 3, ':')) return undefined;
    if (offsetHour === undefined || offsetMinute === undefined || offsetHour > 23 || offsetMinute > 59)
      return undefined;
    offsetMinutes = (text[position] === '-' ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const minutes = (daysFromCivil(year, month, day) * 24 + hour) * 60 + minute - offsetMinutes;
  return minutes * 60_000 + second * 1_000 + milliseconds;
}

/**
 * What POST /api-keys must make of this expiresAt: 'valid' (none, or an instant after now and up to
 * the end of 9999), 'invalid', or 'unclear' within a day of either bound, where the clocks of the
 * test and the service would decide; the run leaves those out.
 */
export function classifyExpiresAt(value: unknown, now: number): 'valid' | 'invalid' | 'unclear' {
  if (value === undefined) return 'valid';
  if (typeof value !== 'string') return 'invalid';
  const instant = rfc3339Instant(value);
  if (instant === undefined) return 'invalid';
  if (Math.abs(instant - now) < DAY_MS || Math.abs(instant - LATEST_EXPIRY_MS) < DAY_MS) return 'unclear';
  return instant > now && instant <= LATEST_EXPIRY_MS ? 'valid' : 'invalid';
}

const padded = (value: number, width: number): string => String(value).padStart(width, '0');

/** A numeric field: mostly in its range at its width, sometimes past it or at another width. */
function dateTimeField(range: [number, number], wider: [number, number], width = 2): fc.Arbitrary<string> {
  const widerValue = fc.integer({ min: wider[0], max: wider[1] });
  return fc.oneof(
    { weight: 20, arbitrary: fc.integer({ min: range[0], max: range[1] }).map((value) => padded(value, width)) },
    { weight: 1, arbitrary: widerValue.map((value) => padded(value, width)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(widerValue, fc.integer({ min: 1, max: width + 1 }))
        .map(([value, otherWidth]) => padded(value, otherWidth)),
    },
  );
}

const THIS_YEAR = new Date().getUTCFullYear();

const yearField: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: THIS_YEAR, max: THIS_YEAR + 100 }).map(String) },
  { weight: 4, arbitrary: fc.integer({ min: 1_000, max: 9_999 }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom(THIS_YEAR - 1, THIS_YEAR, THIS_YEAR + 1, 1_000, 9_999).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 999 }).map((year) => padded(year, 4)) },
  // 1-3 or 5-6 digits, and ISO 8601's expanded years with a sign.
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.integer({ min: 0, max: 999 }).map(String),
      fc.integer({ min: 10_000, max: 999_999 }).map(String),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 999_999 }), fc.integer({ min: 4, max: 6 }))
        .map(([sign, year, width]) => sign + padded(year, width)),
    ),
  },
);

const digitString = (minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });

const offsetField: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('Z', 'z') },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('+', '-'), dateTimeField([0, 23], [0, 25]), dateTimeField([0, 59], [0, 60]))
      .map(([sign, hour, minute]) => `${sign}${hour}:${minute}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('+', '-'), dateTimeField([0, 23], [0, 25]), dateTimeField([0, 59], [0, 60]))
      .map(([sign, hour, minute]) => `${sign}${hour}${minute}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('', 'UTC', 'GMT', '+24:00', '-00:00', 'Z+01:00', ' Z', '\u221201:00') },
);

/** YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), each part well-formed most of the time. */
const dateTimeFromParts = (year: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc
    .record({
      year,
      month: dateTimeField([1, 12], [0, 13]),
      day: dateTimeField([1, 31], [0, 32]),
      hour: dateTimeField([0, 23], [0, 25]),
      minute: dateTimeField([0, 59], [0, 60]),
      second: dateTimeField([0, 59], [0, 61]),
      fraction: fc.oneof(
        { weight: 6, arbitrary: fc.constant('') },
        { weight: 6, arbitrary: digitString(1, 9).map((digits) => `.${digits}`) },
        { weight: 1, arbitrary: fc.oneof(fc.constant(''), digitString(10, 12)).map((digits) => `.${digits}`) },
      ),
      offset: offsetField,
      designator: fc.oneof({ weight: 10, arbitrary: fc.constantFrom('T', 't') }, fc.constantFrom(' ', '', '_', 'TT')),
      dateSeparator: fc.oneof({ weight: 20, arbitrary: fc.constant('-') }, fc.constantFrom('/', '', '.', '\u2010')),
      timeSeparator: fc.oneof({ weight: 20, arbitrary: fc.constant(':') }, fc.constantFrom('', '.', '-')),
    })
    .map(
      ({ year, month, day, hour, minute, second, fraction, offset, designator, dateSeparator, timeSeparator }) =>
        `${year}${dateSeparator}${month}${dateSeparator}${day}${designator}` +
        `${hour}${timeSeparator}${minute}${timeSeparator}${second}${fraction}${offset}`,
    );

const CALENDAR_EDGES = [
  `${THIS_YEAR + 2}-02-29T00:00:00Z`,
  `${THIS_YEAR + 3}-02-29T00:00:00Z`,
  '2096-02-29T00:00:00Z',
  '2100-02-29T00:00:00Z',
  '2400-02-29T12:00:00Z',
  '2099-04-31T00:00:00Z',
  '2099-06-30T23:59:59.999999999-23:59',
  '2099-12-31T23:59:60Z',
  '2099-12-31T24:00:00Z',
  '9999-12-29T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '1000-01-01T00:00:00Z',
  '1969-12-31T23:59:59Z',
  '2099-01-01T00:00:00+23:59',
  '2099-01-01T00:00:00-24:00',
];

/** ISO 8601 forms that are not RFC 3339: week and ordinal dates, the basic format, a date or a time alone. */
const otherIsoForms: fc.Arbitrary<string> = fc
  .record({
    year: fc.integer({ min: THIS_YEAR + 1, max: 9_998 }).map(String),
    week: fc.integer({ min: 0, max: 54 }).map((week) => padded(week, 2)),
    weekday: fc.integer({ min: 0, max: 8 }),
    ordinal: fc.integer({ min: 0, max: 367 }).map((day) => padded(day, 3)),
    time: fc.constantFrom('', 'T00:00:00Z', 'T12:30:00+01:00', 'T123000Z'),
    form: fc.constantFrom('week', 'compact-week', 'ordinal', 'compact-ordinal', 'basic', 'date', 'time'),
  })
  .map(({ year, week, weekday, ordinal, time, form }) => {
    switch (form) {
      case 'week':
        return `${year}-W${week}-${weekday}${time}`;
      case 'compact-week':
        return `${year}W${week}${weekday}${time}`;
      case 'ordinal':
        return `${year}-${ordinal}${time}`;
      case 'compact-ordinal':
        return `${year}${ordinal}${time}`;
      case 'basic':
        return `${year}1231T000000Z`;
      case 'date':
        return `${year}-12-31`;
      default:
        return `12:30:00Z`;
    }
  });

/** A future RFC 3339 date-time, then made something else: padded, other digits, invisible characters. */
const alteredDateTime: fc.Arbitrary<string> = fc
  .tuple(
    fc.integer({ min: THIS_YEAR + 1, max: 9_998 }),
    fc.constantFrom('', ' ', '\n', '\t', '\u0000', '\u200b', '\ufeff', 'x'),
    fc.constantFrom('', ' ', '\n', '\u0000', '\u00a0', 'Z', '.', 'x'),
    // Fullwidth, Arabic-Indic and Devanagari digits: what \d-like classes of other engines accept.
    fc.constantFrom(0x30, 0x30, 0xff10, 0x0660, 0x0966),
  )
  .filter(([, before, after, zero]) => before !== '' || after !== '' || zero !== 0x30)
  .map(([year, before, after, zero]) =>
    `${before}${year}-06-15T12:00:00Z${after}`.replace(/[0-9]/g, (digit) => String.fromCharCode(zero + Number(digit))),
  );

const expiresAtValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: dateTimeFromParts(yearField) },
  { weight: 2, arbitrary: fc.constantFrom(...CALENDAR_EDGES) },
  { weight: 2, arbitrary: otherIsoForms },
  { weight: 2, arbitrary: alteredDateTime },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: fc.constantFrom(...'0123456789-:.TtZz+ W'), minLength: 10, maxLength: 35 }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom(null, true, false, 0, -1, 4_102_444_800, 4_102_444_800_000, [], {}, { date: '2099-01-01' }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      dateTimeFromParts(yearField).map((text) => [text]),
    ),
  },
  // No expiresAt: a key that never expires.
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** What a created key may list as its expiresAt: null when it never expires, else the instant in UTC. */
function listedExpiries(expiresAt: unknown): Array<string | null> {
  if (typeof expiresAt !== 'string') return [null];
  const instant = rfc3339Instant(expiresAt);
  if (instant === undefined) return [null];
  // Stored to the millisecond: nonzero digits past it may round it up.
  const instants = /\.[0-9]{3}[0-9]*[1-9]/.test(expiresAt) ? [instant, instant + 1] : [instant];
  return instants.map((time) => new Date(time).toISOString());
}

function apiKeyExpiryRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return expiresAtValue
    .map((expiresAt) => ({ expiresAt, verdict: classifyExpiresAt(expiresAt, Date.now()) }))
    .filter(({ verdict }) => verdict !== 'unclear')
    .map(({ expiresAt, verdict }) => {
      const listable = listedExpiries(expiresAt);
      return request({
        category: 'api-key-expiry',
        method: 'POST',
        path: '/api-keys',
        headers: { authorization: bearer(targets.adminToken), ...json },
        body: Buffer.from(JSON.stringify({ name: 'fuzzed expiry', scopes: ['posts:read'], expiresAt })),
        valid: verdict === 'valid',
        expected: [verdict === 'valid' ? 201 : 400],
        problems: { 400: { type: 'validation-failed', error: { pointer: '/expiresAt' } } },
        successBodyViolation: (body) => {
          const listed = (body as { expiresAt?: unknown }).expiresAt;
          return listable.includes(listed as string | null)
            ? null
            : `expiresAt ${JSON.stringify(listed)}, not ${listable.join(' or ')}`;
        },
      });
    });
}

// --- post states (contract §10) ----------------------------------------------------------------------------

const HOUR_MS = 3_600_000;
/**
 * How far from the clock a generated publishedAt stays. A run lasts minutes, so an instant over an
 * hour after the clock is in the future at every request of the run, and one over an hour before it
 * in the past.
 */
const CLOCK_MARGIN_MS = HOUR_MS;
/** A scheduled fixture or setup post is due this long after the clock: never during a run. */
export const SCHEDULED_IN_MS = 30 * DAY_MS;
/** The publishedAt of a 'backdated' setup post (an import). */
export const BACKDATED_AT = '2001-02-03T04:05:06.789Z';
// The instants of the years 1000-9999, the range docs/api.md gives an expiresAt and MySQL's DATETIME
// holds; written with another offset, an instant near either end may fall outside.
const EARLIEST_INSTANT_MS = daysFromCivil(1_000, 1, 1) * DAY_MS;

export type PublishedAtReading =
  | { kind: 'absent' }
  | { kind: 'null' }
  | { kind: 'instant'; instant: number }
  | { kind: 'invalid' }
  | { kind: 'unclear' };

/**
 * A publishedAt member: null, an RFC 3339 date-time (as rfc3339Instant reads it) of an instant in the
 * years 1000-9999, or invalid. 'unclear' within a day of those bounds, and within an hour of the
 * clock, where past and future could trade places.
 */
export function classifyPublishedAt(value: unknown, clock: number): PublishedAtReading {
  if (value === null) return { kind: 'null' };
  if (typeof value !== 'string') return { kind: 'invalid' };
  const instant = rfc3339Instant(value);
  if (instant === undefined) return { kind: 'invalid' };
  if (Math.abs(instant - EARLIEST_INSTANT_MS) < DAY_MS || Math.abs(instant - LATEST_EXPIRY_MS) < DAY_MS) {
    return { kind: 'unclear' };
  }
  if (instant < EARLIEST_INSTANT_MS || instant > LATEST_EXPIRY_MS) return { kind: 'invalid' };
  if (Math.abs(instant - clock) <= CLOCK_MARGIN_MS) return { kind: 'unclear' };
  return { kind: 'instant', instant };
}

interface InstantForm {
  /** Minutes east of UTC. */
  offsetMinutes: number;
  /** 'ms': the instant's milliseconds; else these fraction digits (which change the instant). */
  fraction: string;
  designator: string;
  /** How an offset of 0 is written. */
  zulu: string;
}

// RFC 3339 §5.6 leaves these free: the offset, 1-9 fraction digits or none, t and z in lower case.
const instantForm: fc.Arbitrary<InstantForm> = fc.record({
  offsetMinutes: fc.oneof(
    { weight: 6, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.constantFrom(60, -300, 330, 345, -570, 23 * 60 + 59, -(23 * 60 + 59)) },
    { weight: 1, arbitrary: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }) },
  ),
  fraction: fc.oneof(
    { weight: 4, arbitrary: fc.constant('ms') },
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 2, arbitrary: digitString(1, 9).map((digits) => `.${digits}`) },
  ),
  designator: fc.constantFrom('T', 'T', 't'),
  zulu: fc.constantFrom('Z', 'Z', 'z', '+00:00', '-00:00'),
});

function writeInstant(instant: number, { offsetMinutes, fraction, designator, zulu }: InstantForm): string {
  const local = new Date(instant + offsetMinutes * 60_000).toISOString();
  const minutes = Math.abs(offsetMinutes);
  const offset =
    offsetMinutes === 0
      ? zulu
      : `${offsetMinutes < 0 ? '-' : '+'}${padded(Math.floor(minutes / 60), 2)}:${padded(minutes % 60, 2)}`;
  return `${local.slice(0, 10)}${designator}${local.slice(11, 19)}${fraction === 'ms' ? local.slice(19, 23) : fraction}${offset}`;
}

/** From just past the clock margin to centuries, within the years 1000-9999 from any clock of this millennium. */
const distanceFromClock: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: CLOCK_MARGIN_MS + 60_000, max: 2 * HOUR_MS }),
  fc.integer({ min: DAY_MS, max: 400 * DAY_MS }),
  fc.integer({ min: 400 * DAY_MS, max: 900 * 365 * DAY_MS }),
);

/** An RFC 3339 date-time over an hour before the clock, in any of its forms. */
export function pastInstant(clock: number): fc.Arbitrary<string> {
  return fc.tuple(distanceFromClock, instantForm).map(([distance, form]) => writeInstant(clock - distance, form));
}

/** An RFC 3339 date-time over an hour after the clock, in any of its forms. */
export function futureInstant(clock: number): fc.Arbitrary<string> {
  return fc.tuple(distanceFromClock, instantForm).map(([distance, form]) => writeInstant(clock + distance, form));
}

const publishedYearField: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1_000, max: 9_999 }).map(String) },
  { weight: 4, arbitrary: fc.integer({ min: THIS_YEAR - 30, max: THIS_YEAR + 30 }).map(String) },
  { weight: 2, arbitrary: yearField },
);

/** publishedAt values: instants before and after the clock, null, odd forms, near misses, other types. */
export function publishedAtValue(clock: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 5, arbitrary: futureInstant(clock) },
    { weight: 5, arbitrary: pastInstant(clock) },
    { weight: 3, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        BACKDATED_AT,
        '1970-01-01T00:00:00Z',
        '1969-12-31T23:59:59.999Z',
        '2000-02-29T23:59:59.999999999-23:59',
        '2038-01-19T03:14:08Z',
        '1000-01-03T00:00:00Z',
        '9999-12-29T12:00:00+01:00',
        `${THIS_YEAR - 1}-12-31t23:59:59z`,
      ),
    },
    { weight: 3, arbitrary: dateTimeFromParts(publishedYearField) },
    { weight: 1, arbitrary: fc.constantFrom(...CALENDAR_EDGES) },
    { weight: 1, arbitrary: otherIsoForms },
    { weight: 1, arbitrary: alteredDateTime },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({ unit: fc.constantFrom(...'0123456789-:.TtZz+ W'), minLength: 10, maxLength: 35 }),
        fc.constantFrom('', 'now', 'today', 'null', 'Tue, 15 Nov 1994 08:12:31 GMT', '2001-02-03', '04:05:06Z'),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.oneof(
        fc.constantFrom(true, false, 0, -1, 1_700_000_000, 1_700_000_000_000, [], {}, { instant: BACKDATED_AT }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        pastInstant(clock).map((text) => [text]),
      ),
    },
  );
}

const STATUS_LOOKALIKES = [
  'Draft',
  'DRAFT',
  'Published',
  'PUBLISHED',
  'Scheduled',
  'draft ',
  ' draft',
  'published\u0000',
  'scheduled\n',
  'dra\u200bft',
  '\uff44\uff52\uff41\uff46\uff54',
  'publish',
  'public',
  'private',
  'deleted',
  'archived',
  'trash',
  'pending',
  '',
  'draft,published',
  'null',
  '0',
  'publishedAt',
];

/** status values: the three states, near misses, other types. */
export const statusValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...POST_STATUSES) },
  { weight: 2, arbitrary: fc.constantFrom(...STATUS_LOOKALIKES) },
  { weight: 2, arbitrary: fc.constantFrom(null, 0, 1, true, false, [], ['draft'], {}, { status: 'draft' }) },
  { weight: 1, arbitrary: textArbitrary },
);

/** The JSON text of a value; a string now and then with every unit escaped (the same string). */
function jsonFragmentOf(value: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc
    .tuple(value, fc.nat({ max: 7 }))
    .map(([member, draw]) =>
      typeof member === 'string' && draw === 0 && member.length <= 1_000
        ? escapeEveryUnit(member)
        : JSON.stringify(member),
    );
}

/** State members any post may take whatever its state: draft; published in the past; scheduled in the future. */
function anyStateMembers(clock: number): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.constantFrom({ status: 'draft' }, { status: 'draft', publishedAt: null }) },
    { weight: 1, arbitrary: pastInstant(clock).map((publishedAt) => ({ status: 'published', publishedAt })) },
    { weight: 1, arbitrary: futureInstant(clock).map((publishedAt) => ({ status: 'scheduled', publishedAt })) },
  );
}

const scheduledAt = (clock: number): number => clock + SCHEDULED_IN_MS;

/** The state a setup post is in once made. */
export function setupPostState(state: SetupState, clock: number): PostState {
  switch (state) {
    case 'published':
      return { status: 'published', publishedAt: 'now' };
    case 'backdated':
      return { status: 'published', publishedAt: Date.parse(BACKDATED_AT) };
    case 'draft':
      return { status: 'draft', publishedAt: null };
    case 'scheduled':
      return { status: 'scheduled', publishedAt: scheduledAt(clock) };
  }
}

/** The title of a setup post at `version`: what restoring its revision `version` brings back. */
export const setupTitle = (version: number): string => `Version ${version}`;

export interface PostBody {
  title: string;
  content: string;
  author: string;
  status?: PostStatus;
  publishedAt?: string | null;
}

/** What makes a setup post, as the writer: its create, then its merge patches (its DELETE is the caller's). */
export function setupRequests(
  setup: PostSetup,
  clock: number,
): { create: PostBody; patches: Array<Partial<PostBody>> } {
  const state: Partial<PostBody> = {
    published: {},
    backdated: { status: 'published' as const, publishedAt: BACKDATED_AT },
    draft: { status: 'draft' as const },
    scheduled: { status: 'scheduled' as const, publishedAt: new Date(scheduledAt(clock)).toISOString() },
  }[setup.state];
  return {
    create: { title: setupTitle(1), content: 'Made for one fuzzed request', author: 'Fuzz', ...state },
    patches: Array.from({ length: setup.patches }, (_, index) => ({ title: setupTitle(index + 2) })),
  };
}

export const setupState: fc.Arbitrary<SetupState> = fc.constantFrom('published', 'backdated', 'draft', 'scheduled');

const ID_SAMPLES = [
  '-1',
  '0',
  '00',
  '01',
  '1.5',
  '1.0',
  '1e3',
  '1E3',
  '+1',
  '%2B1',
  '0x10',
  '0b1',
  '1_000',
  '1,000',
  '%201',
  '1%20',
  '1%09',
  '99999999999999999999',
  '99999999999999999999999',
  '9007199254740991',
  '9007199254740992',
  '18446744073709551616',
  '-9007199254740991',
  '%00',
  '1%00',
  '%0A',
  '.',
  '..',
  '%2e%2e',
  '%2F',
  '1%2F2',
  '%5C',
  '%',
  '%%',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%ED%A0%80',
  '%FF',
  'abc',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  'true',
  '1n',
  '1;x',
  encodeURIComponent('caf\u00e9'),
  encodeURIComponent('１'),
  encodeURIComponent('١٢'),
  encodeURIComponent('𝟏'),
  encodeURIComponent('Ⅻ'),
  encodeURIComponent('1\u200f'),
];

// Raw path characters (no '/', '?' or '#': they would change the route). Only ASCII: Node's HTTP
// parser refuses bytes 0x80-0xFF in the request line with a bare 400 before the app sees the request.
const pathCharacter = fc
  .integer({ min: 0x21, max: 0x7e })
  .map((code) => String.fromCharCode(code))
  .filter((character) => !'/?#'.includes(character));

export const rawId: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ID_SAMPLES) },
  { weight: 1, arbitrary: fc.integer({ max: 0 }).map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }).map(String) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 1, max: 20 }), fc.nat()).map(([zeros, id]) => '0'.repeat(zeros) + id),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('1', '9', 'x', '%00', '%2e'), fc.integer({ min: 17, max: 2_000 }))
      .map(([unit, count]) => unit.repeat(count)),
  },
  { weight: 2, arbitrary: fc.string({ unit: pathCharacter, minLength: 1, maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.integer({ min: UNUSED_ID_FLOOR, max: Number.MAX_SAFE_INTEGER }).map(String) },
);

const ODD_PATHS = ['/posts/1/x', '/posts//1', '//posts/1', '/Posts/1', '/posts/1/..', '/posts/./1', '/posts/%2e%2e/1'];

function pathRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: fc.constantFrom('GET', 'GET', 'PUT', 'PATCH', 'DELETE'),
      id: rawId,
      trailingSlash: fc.boolean(),
      odd: fc.option(fc.constantFrom(...ODD_PATHS), { freq: 20 }),
      replacement: validBody('replace', targets.clock),
      patch: validBody('patch', targets.clock),
    })
    .filter(({ method, id }) => {
      // Writes must not reach a post this run created: well-formed ids below the floor are left out.
      const classified = classifyId(id);
      return method === 'GET' || !classified.valid || classified.id! >= UNUSED_ID_FLOOR;
    })
    .map(({ method, id, trailingSlash, odd, replacement, patch }) => {
      const headers: Record<string, string> = { authorization: bearer(targets.writerToken) };
      if (method === 'PUT' || method === 'PATCH') Object.assign(headers, json);
      if (method !== 'GET') headers['if-match'] = NEVER_MATCHING_ETAG;
      const { valid } = classifyId(id);
      const expected = odd !== null ? [404, 405] : !valid ? [400] : method === 'GET' ? [200, 404] : [404];
      return request({
        category: 'path',
        method,
        path: odd ?? `/posts/${id}${trailingSlash ? '/' : ''}`,
        headers,
        body: method === 'PUT' ? replacement : method === 'PATCH' ? patch : undefined,
        valid: odd === null && valid && method === 'GET',
        expected,
      });
    })
    .filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/** Percent-encodes as UTF-8, and a lone surrogate as the 3 bytes CESU-8 would use (not UTF-8). */
function percentEncode(text: string): string {
  let encoded = '';
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      encoded += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    } else encoded += encodeURIComponent(character);
  }
  return encoded;
}

/** As typed by hand: reserved characters ('&', '=', '+', '%') kept raw, the rest encoded as node:http needs. */
function looselyEncode(text: string): string {
  return [...text]
    .map((character) => (/[\x21-\x7e]/.test(character) && character !== '#' ? character : percentEncode(character)))
    .join('');
}

export const QUERY_KEYS = [
  'limit[]',
  'limit[0]',
  'Limit',
  'LIMIT',
  'autor',
  'access_token',
  'offset',
  'page',
  'sort',
  '',
  'prototype',
  ...Object.getOwnPropertyNames(Object.prototype),
  'author[name]',
  'a.b',
];

/**
 * Query strings of up to `maxParameters` generated parameters, each percent-encoded, loosely encoded
 * or bare (a key alone), with junk separators at the end, and an optional X-Request-Id. `sent` may
 * rewrite a value before it is encoded.
 */
export function queryStrings(
  key: fc.Arbitrary<string>,
  value: fc.Arbitrary<string>,
  maxParameters: number,
  sent: (name: string, text: string) => string = (_name, text) => text,
): fc.Arbitrary<{ queryString: string; requestId: string | null }> {
  const parameter = fc.record({ key, value, form: fc.constantFrom('encoded', 'encoded', 'loose', 'bare') });
  return fc
    .record({
      parameters: fc.array(parameter, { maxLength: maxParameters }),
      junk: fc.constantFrom('', '', '', '&', '&&', '=', '&=&'),
      requestId: requestIdHeader,
    })
    .map(({ parameters, junk, requestId }) => ({
      queryString:
        parameters
          .map(({ key: name, value: text, form }) =>
            form === 'bare'
              ? percentEncode(name)
              : form === 'loose'
                ? `${looselyEncode(name)}=${looselyEncode(sent(name, text))}`
                : `${percentEncode(name)}=${percentEncode(sent(name, text))}`,
          )
          .join('&') + junk,
      requestId,
    }));
}

function queryRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const { cursor } = targets;
  const key = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('limit', 'cursor', 'author', 'order', 'count', 'status') },
    { weight: 2, arbitrary: fc.constantFrom(...QUERY_KEYS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  const value = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...POST_STATUSES, ...STATUS_LOOKALIKES) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '',
        '0',
        '00',
        '1',
        '007',
        '20',
        '100',
        '101',
        '-1',
        '1.5',
        '1e3',
        '+5',
        ' 5',
        '5 ',
        '0x10',
        '\uff19',
        'NaN',
        'Infinity',
        'null',
        'true',
        'false',
        'TRUE',
        'asc',
        'desc',
        'ASC',
        'Desc',
        'sideways',
        'Ada Lovelace',
      ),
    },
    { weight: 1, arbitrary: fc.nat().map(String) },
    { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: 10n ** 40n }).map(String) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5_000 }).map((length) => '9'.repeat(length)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        cursor,
        cursor,
        cursor.slice(0, -1),
        `${cursor}A`,
        `${cursor}=`,
        cursor.toUpperCase(),
        cursor.replace('.', ''),
        `${cursor.split('.')[0]}.${'A'.repeat(22)}`,
        'abc.def',
        '.',
        'a'.repeat(300),
      ),
    },
    { weight: 3, arbitrary: textArbitrary },
  );
  return queryStrings(key, value, 6)
    .map(({ queryString, requestId }) => {
      const valid = isValidListQuery(queryString, cursor);
      const headers: Record<string, string> = { authorization: bearer(targets.writerToken) };
      if (requestId !== null) headers['x-request-id'] = requestId;
      const status = (parseQueryString(queryString).status as PostStatus | undefined) ?? 'published';
      return request({
        category: 'query',
        method: 'GET',
        path: `/posts?${queryString}`,
        headers,
        valid,
        expected: [valid ? 200 : 400],
        // §10: published posts, or the writer's own drafts or scheduled posts, never the other writer's.
        successBodyViolation: (body) => {
          if (!Array.isArray(body)) return 'a 200 whose body is not a list';
          const posts = body as Array<{ id?: unknown; status?: unknown }>;
          const other = posts.find((post) => post.status !== status);
          if (other !== undefined) return `post ${String(other.id)} is ${String(other.status)} in a list of ${status}`;
          const hidden = posts.find((post) => targets.hiddenPostIds.includes(post.id as number));
          return hidden === undefined ? null : `the other writer's ${status} post ${String(hidden.id)} is listed`;
        },
      });
    })
    .filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/**
 * GET /events with generated queries, as an admin (the feed's scope). A valid wait is only ever 0:
 * a long poll with nothing after the cursor would outlast the request deadline.
 */
function eventsQueryRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const head = String(targets.feedHead);
  const key = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('after', 'limit', 'type', 'wait') },
    { weight: 2, arbitrary: fc.constantFrom(...QUERY_KEYS, 'cursor', 'types', 'Type') },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  const value = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        '',
        '0',
        '00',
        '1',
        '001',
        head,
        `0${head}`,
        '999999999999999',
        '9999999999999999',
        '-1',
        '1.5',
        '1e3',
        ' 1',
        '1 ',
        '0x10',
        '\uff11',
        '100',
        '101',
        '31',
        '030',
        'post.created',
        'post.deleted,post.updated',
        'post.published',
        'post.unpublished,post.restored,post.purged',
        'post.restored,post.removed',
        'post.created,post.created',
        'post.created,',
        ',post.created',
        'post.*',
        'POST.CREATED',
        'post.created post.deleted',
        '*',
      ),
    },
    { weight: 1, arbitrary: fc.nat().map(String) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5_000 }).map((length) => '9'.repeat(length)) },
    { weight: 2, arbitrary: textArbitrary },
  );
  return queryStrings(key, value, 5, (name, text) => sentEventsValue(name, text, targets.feedHead))
    .map(({ queryString, requestId }) => {
      const valid = isValidEventsQuery(queryString, targets.feedHead);
      const headers: Record<string, string> = { authorization: bearer(targets.adminToken) };
      if (requestId !== null) headers['x-request-id'] = requestId;
      return request({
        category: 'events-query',
        method: 'GET',
        path: `/events?${queryString}`,
        headers,
        valid,
        expected: [valid ? 200 : 400],
        successBodyViolation: (body) =>
          Array.isArray(body) && body.every((event) => typeof (event as { id?: unknown }).id === 'string')
            ? null
            : 'a 200 whose body is not a list of events',
      });
    })
    .filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/**
 * What the events fuzz sends for a generated value: a valid wait other than 0 becomes 0 (see above);
 * an event id after the fixtures' newest but one the run's own writes could reach becomes one they
 * never will, so that whether it is valid does not depend on when it is sent.
 */
function sentEventsValue(name: string, text: string, feedHead: number): string {
  if (name === 'wait' && /^(?:[1-9]|[12][0-9]|30)$/.test(text)) return '0';
  if (name === 'after' && /^[0-9]{1,15}$/.test(text) && Number(text) > feedHead && Number(text) < 1e12) {
    return '999999999999999';
  }
  return text;
}

/** The generator of each category. */
export function fuzzArbitraries(targets: FuzzTargets): Record<PostsCategory, fc.Arbitrary<FuzzRequest>> {
  return {
    'post-body': jsonBodyRequests('post-body', 'create', targets),
    'put-body': jsonBodyRequests('put-body', 'replace', targets),
    'patch-body': jsonBodyRequests('patch-body', 'patch', targets),
    'raw-body': rawBodyRequests(targets),
    'content-type': contentTypeRequests(targets),
    authorization: authorizationRequests(targets),
    'if-match': ifMatchRequests(targets),
    'if-none-match': ifNoneMatchRequests(targets),
    'idempotency-key': idempotencyKeyRequests(targets),
    'api-key-expiry': apiKeyExpiryRequests(targets),
    path: pathRequests(targets),
    query: queryRequests(targets),
    'events-query': eventsQueryRequests(targets),
  };
}
