import { parse as parseQueryString } from 'node:querystring';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';

// Generators of malformed (and a few well-formed) requests for the posts API, each paired with what
// the contract (shared/spec/posts-api.md, docs/api.md) says the service must answer. The oracles
// below are written from the contract, not from the service's code, so they can disagree with it.

export const BODY_LIMIT_BYTES = 1024 * 1024;
/** An If-Match no post can satisfy (there is no post 0): a write carrying it can never apply. */
export const NEVER_MATCHING_ETAG = '"0.0"';
/**
 * Node's HTTP parser answers a request head over 16 KiB with a bare 431 (no problem body) before the
 * app sees it, so paths and query strings stay well below that.
 */
const MAX_URL_LENGTH = 8 * 1024;
/** Well-formed ids from here on are never reached by the posts a run creates: writes to them are 404. */
const UNUSED_ID_FLOOR = 1e12;

export type Category =
  | 'post-body'
  | 'put-body'
  | 'patch-body'
  | 'raw-body'
  | 'content-type'
  | 'authorization'
  | 'if-match'
  | 'idempotency-key'
  | 'path'
  | 'query';

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
}

/** What the run aims at: tokens, and the fixture posts that malformed writes must leave untouched. */
export interface FuzzTargets {
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

/** Whether these bytes are a JSON body the contract accepts for a create, a replacement or a merge patch. */
export function isValidPostBody(bytes: Buffer, mode: BodyMode): boolean {
  let value: unknown;
  try {
    // Fatal: invalid UTF-8 is an error. TextDecoder drops one leading byte order mark, which RFC 8259
    // §8.1 lets a parser ignore.
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return false;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const members = Object.keys(value);
  if (members.some((member) => !(FIELDS as readonly string[]).includes(member))) return false;
  if (mode === 'patch' ? members.length === 0 : members.length !== FIELDS.length) return false;
  return members.every((member) =>
    isValidText((value as Record<string, unknown>)[member], TEXT_RULES[member as Field]),
  );
}

/** Whether the query string of GET /posts is one the contract answers with 200 (spec §3, docs/api.md). */
export function isValidListQuery(queryString: string, issuedCursor: string): boolean {
  // Express's "simple" query parser is node:querystring: this is what the service sees.
  const query = parseQueryString(queryString);
  const allowed = ['limit', 'cursor', 'author', 'order', 'count'];
  for (const [key, value] of Object.entries(query)) {
    if (!allowed.includes(key) || typeof value !== 'string') return false;
  }
  const { limit, cursor, author, order, count } = query as Record<string, string | undefined>;
  if (limit !== undefined && (!/^[0-9]+$/.test(limit) || /^0+$/.test(limit))) return false;
  if (order !== undefined && order !== 'asc' && order !== 'desc') return false;
  if (count !== undefined && count !== 'true' && count !== 'false') return false;
  if (author !== undefined && !isValidText(author, TEXT_RULES.author)) return false;
  // A cursor belongs to the order and filter it was issued for (desc, no author).
  if (cursor !== undefined && (cursor !== issuedCursor || (order ?? 'desc') !== 'desc' || author !== undefined)) {
    return false;
  }
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

/** Whether an Idempotency-Key header is usable: 1-255 printable ASCII characters, or that as an RFC 8941 string. */
export function isValidIdempotencyKey(header: string): boolean {
  const trimmed = header.replace(/^[ \t]+|[ \t]+$/g, '');
  const quoted = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(trimmed);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : trimmed;
  return (quoted !== null || !trimmed.startsWith('"')) && /^[\x21-\x7e]{1,255}$/.test(key);
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
];

const memberName: fc.Arbitrary<string> = jsonStringFragment(
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...EXTRA_MEMBERS) },
    { weight: 1, arbitrary: fc.constantFrom(...FIELDS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  ),
);

/** A JSON object text with the post fields present or not, odd values, extra members and odd spacing. */
function jsonBodyText(mode: BodyMode): fc.Arbitrary<string> {
  // fc.option gives null once in `freq` draws: a create or replace usually has the field.
  const field = fc.option(valueFragment, { freq: mode === 'patch' ? 2 : 8 });
  return fc
    .record({
      title: field,
      content: field,
      author: field,
      extras: fc.oneof(
        { weight: 3, arbitrary: fc.constant<Array<[string, string]>>([]) },
        { weight: 1, arbitrary: fc.array(fc.tuple(memberName, valueFragment), { minLength: 1, maxLength: 3 }) },
      ),
      extrasFirst: fc.boolean(),
      spacing: fc.constantFrom('', '', '', ' ', '\n', '\t', ' \r\n '),
    })
    .map(({ title, content, author, extras, extrasFirst, spacing }) => {
      const fields = Object.entries({ title, content, author })
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

/** A body the contract accepts: every header-level case sends one, so only the header decides. */
function validBody(mode: BodyMode): fc.Arbitrary<Buffer> {
  const post = fc.record({ title: validFieldText, content: validFieldText, author: validFieldText });
  if (mode !== 'patch') return post.map((value) => Buffer.from(JSON.stringify(value)));
  return fc
    .tuple(post, fc.subarray([...FIELDS], { minLength: 1 }))
    .map(([value, fields]) =>
      Buffer.from(JSON.stringify(Object.fromEntries(fields.map((name) => [name, value[name]])))),
    );
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

const headerText = (maxLength: number): fc.Arbitrary<string> => fc.string({ unit: headerCharacter, maxLength });

const requestIdHeader = fc.option(
  fc.oneof(headerText(40), fc.constantFrom('a'.repeat(128), 'a'.repeat(129), 'x"y', 'trace-01', '../../etc')),
  { freq: 3 },
);

// --- requests -----------------------------------------------------------------------------------------

function request(fields: FuzzRequest): FuzzRequest {
  return Object.assign(fields, { [fc.toStringMethod]: () => describeRequest(fields) });
}

/** One line a person can paste into a bug report: method, path, headers and (the start of) the body. */
export function describeRequest(fuzz: FuzzRequest): string {
  const headers = visible(JSON.stringify(fuzz.headers)).replace(/psk_[A-Za-z0-9_-]{49}/g, '<token>');
  if (fuzz.body === undefined) return `${fuzz.method} ${preview(fuzz.path)} ${headers}`;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(fuzz.body);
  return `${fuzz.method} ${preview(fuzz.path)} ${headers} body (${fuzz.body.length} bytes): ${visible(JSON.stringify(preview(text)))}`;
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

const bearer = (token: string): string => `Bearer ${token}`;
const json = { 'content-type': 'application/json' };

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

function jsonBodyRequests(category: Category, mode: BodyMode, targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const method = { create: 'POST', replace: 'PUT', patch: 'PATCH' }[mode];
  return fc
    .record({
      text: jsonBodyText(mode),
      target: targetPath(targets),
      contentType: fc.constantFrom(
        'application/json',
        mode === 'patch' ? 'application/merge-patch+json' : 'application/json; charset=utf-8',
      ),
      requestId: requestIdHeader,
    })
    .map(({ text, target, contentType, requestId }) => {
      const body = Buffer.from(text);
      const valid = isValidPostBody(body, mode);
      const headers: Record<string, string> = {
        authorization: bearer(targets.writerToken),
        'content-type': contentType,
      };
      if (requestId !== null) headers['x-request-id'] = requestId;
      let expected: number;
      if (mode === 'create') expected = valid ? 201 : 400;
      else {
        headers['if-match'] = NEVER_MATCHING_ETAG;
        expected = valid ? STATUS_OF_VALID_WRITE[target.target] : 400;
      }
      if (body.length > BODY_LIMIT_BYTES) expected = 413;
      return request({
        category,
        method,
        path: mode === 'create' ? '/posts' : `/posts/${target.id}`,
        headers,
        body,
        valid: valid && mode === 'create' && expected === 201,
        expected: [expected],
      });
    });
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

const rawBody: fc.Arbitrary<RawBody> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ body: Buffer.from(bytes) })),
  fc.string({ unit: 'binary', maxLength: 200 }).map((text) => ({ body: Buffer.from(text) })),
  fc.constantFrom(...RAW_TEXTS).map((text) => ({ body: Buffer.from(text) })),
  jsonBodyText('create')
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
    .tuple(fc.oneof(jsonBodyText('create'), fc.constantFrom(...RAW_TEXTS)), fc.constantFrom('gzip', 'gzip-header-only'))
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
      rawBody,
      fc.constantFrom<BodyMode>('create', 'create', 'replace', 'patch'),
      fc.constantFrom(...targets.ownPostIds),
    )
    .map(([raw, mode, id]) => {
      const decoded = decodedBody(raw);
      const tooLarge =
        raw.body.length > BODY_LIMIT_BYTES || (decoded !== undefined && decoded.length > BODY_LIMIT_BYTES);
      const valid = decoded !== undefined && !tooLarge && isValidPostBody(decoded, mode);
      const headers: Record<string, string> = { authorization: bearer(targets.writerToken), ...json };
      if (raw.contentEncoding !== undefined) headers['content-encoding'] = raw.contentEncoding;
      if (mode !== 'create') headers['if-match'] = NEVER_MATCHING_ETAG;
      const success = mode === 'create' ? 201 : STATUS_OF_VALID_WRITE.own;
      return request({
        category: 'raw-body',
        method: { create: 'POST', replace: 'PUT', patch: 'PATCH' }[mode],
        path: mode === 'create' ? '/posts' : `/posts/${id}`,
        headers,
        body: raw.body,
        valid: valid && mode === 'create',
        // The limit applies to the inflated size; an unknown Content-Encoding is 415; unreadable or
        // invalid bodies are 400.
        expected: tooLarge ? [413] : valid ? [success] : decoded === undefined ? [400, 415] : [400],
      });
    });
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
      return fc.tuple(fc.constant(mode), fc.constant(method), contentTypes(method), validBody(mode));
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
      replacement: validBody('replace'),
      patch: validBody('patch'),
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

function ifMatchHeaders(id: number): fc.Arbitrary<string> {
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
  return (
    fc
      .array(fc.oneof({ weight: 2, arbitrary: nearMiss }, { weight: 2, arbitrary: garbage }), {
        minLength: 1,
        maxLength: 4,
      })
      .chain((members) => fc.constantFrom(',', ', ', ' ,\t').map((separator) => members.join(separator)))
      // What must not match: * and the current tag, with optional whitespace (SP, HTAB) around them.
      .filter((header) => {
        const members = header.split(',').map((member) => member.replace(/^[ \t]+|[ \t]+$/g, ''));
        return !(members.length === 1 && members[0] === '*') && !members.includes(current);
      })
  );
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
      replacement: validBody('replace'),
      patch: validBody('patch'),
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
          // A malformed list is 400; a well-formed one that does not match is 412 (403 for another's post).
          expected: own ? [400, 412] : [400, 403],
        }),
    );
}

function idempotencyKeyRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const key = fc.oneof(
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
      'caf\u00e9',
      '\u00ff',
      'abc\u00a0',
      '\u00a0abc',
      "~!@#$%^&*()_+{}|:<>?`-=[]\\;',./",
    ),
    fc.integer({ min: 250, max: 4_000 }).map((length) => 'k'.repeat(length)),
  );
  return fc.tuple(key, validBody('create')).map(([idempotencyKey, body]) => {
    const valid = isValidIdempotencyKey(idempotencyKey);
    return request({
      category: 'idempotency-key',
      method: 'POST',
      path: '/posts',
      headers: { authorization: bearer(targets.writerToken), ...json, 'idempotency-key': idempotencyKey },
      body,
      valid,
      // A usable key that an earlier request sent with another body is 422 (idempotency-key-reused).
      expected: valid ? [201, 422] : [400],
    });
  });
}

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

const rawId: fc.Arbitrary<string> = fc.oneof(
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
      replacement: validBody('replace'),
      patch: validBody('patch'),
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

const QUERY_KEYS = [
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

function queryRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const { cursor } = targets;
  const key = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('limit', 'cursor', 'author', 'order', 'count') },
    { weight: 2, arbitrary: fc.constantFrom(...QUERY_KEYS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  const value = fc.oneof(
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
  const parameter = fc.record({
    key,
    value,
    form: fc.constantFrom('encoded', 'encoded', 'loose', 'bare'),
  });
  return fc
    .record({
      parameters: fc.array(parameter, { maxLength: 6 }),
      junk: fc.constantFrom('', '', '', '&', '&&', '=', '&=&'),
      requestId: requestIdHeader,
    })
    .map(({ parameters, junk, requestId }) => {
      const queryString =
        parameters
          .map(({ key: name, value: text, form }) =>
            form === 'bare'
              ? percentEncode(name)
              : form === 'loose'
                ? `${looselyEncode(name)}=${looselyEncode(text)}`
                : `${percentEncode(name)}=${percentEncode(text)}`,
          )
          .join('&') + junk;
      const valid = isValidListQuery(queryString, cursor);
      const headers: Record<string, string> = { authorization: bearer(targets.writerToken) };
      if (requestId !== null) headers['x-request-id'] = requestId;
      return request({
        category: 'query',
        method: 'GET',
        path: `/posts?${queryString}`,
        headers,
        valid,
        expected: [valid ? 200 : 400],
      });
    })
    .filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/** The generator of each category. */
export function fuzzArbitraries(targets: FuzzTargets): Record<Category, fc.Arbitrary<FuzzRequest>> {
  return {
    'post-body': jsonBodyRequests('post-body', 'create', targets),
    'put-body': jsonBodyRequests('put-body', 'replace', targets),
    'patch-body': jsonBodyRequests('patch-body', 'patch', targets),
    'raw-body': rawBodyRequests(targets),
    'content-type': contentTypeRequests(targets),
    authorization: authorizationRequests(targets),
    'if-match': ifMatchRequests(targets),
    'idempotency-key': idempotencyKeyRequests(targets),
    path: pathRequests(targets),
    query: queryRequests(targets),
  };
}
