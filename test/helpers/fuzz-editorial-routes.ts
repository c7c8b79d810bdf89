import { parse as parseQueryString } from 'node:querystring';
import fc from 'fast-check';
import {
  bearer,
  classifyId,
  fieldValue,
  isValidLimit,
  json,
  MAX_URL_LENGTH,
  NEVER_MATCHING_ETAG,
  QUERY_KEYS,
  queryStrings,
  rawId,
  readEntityTagList,
  request,
  setupPostState,
  setupState,
  setupTitle,
  textArbitrary,
  UNUSED_ID_FLOOR,
  type EditorialCategory,
  type FuzzRequest,
  type FuzzTargets,
  type PostSetup,
  type PostState,
  type PostStatus,
} from './fuzz-arbitraries.js';

// Generators of requests to the revisions and trash routes of contract §10 (GET /posts/{id}/revisions,
// GET /posts/{id}/revisions/{version}, POST /posts/{id}/revisions/{version}/restore, GET /trash,
// POST /trash/{id}/restore, DELETE /trash/{id}), each paired with what the contract says the service
// must answer, as in fuzz-arbitraries.ts. Precedence, as the contract gives it: 401, then 403 for a
// missing scope, then 400 for a malformed request, then 404 for a post the caller may not see and 403
// for one it may see but not change (§10), then 412 (§6).

type Who = 'writer' | 'other' | 'reader' | 'admin';

/** A post the oracles know: whose it is, where it is, its state, its revisions. */
interface KnownPost {
  /** As sent in a path: its id, or '{id}' for a setup post. */
  id: string;
  owner: 'writer' | 'other';
  status: PostStatus;
  where: 'posts' | 'trash';
  /** Its revisions are versions 1..revisions; `version` is its current one. */
  revisions: number;
  version: number;
  /** The cursor of its revisions' second page (limit=1), when it has one. */
  cursor?: string;
  /** A fixture: no valid write may reach it (the run checks the tables against that). */
  fixture: boolean;
  /** For a setup post: how it is made, and the state it is then in. */
  setup?: PostSetup;
  state?: PostState;
}

/** Where a path points: a known post, a well-formed id no post has, or a malformed id. */
type PathId = { kind: 'post'; post: KnownPost } | { kind: 'missing'; id: string } | { kind: 'malformed'; id: string };

function tokenOf(who: Who, targets: FuzzTargets): string {
  return {
    writer: targets.writerToken,
    other: targets.otherWriterToken,
    reader: targets.readerToken,
    admin: targets.adminToken,
  }[who];
}

const principal: fc.Arbitrary<Who> = fc.oneof(
  { weight: 5, arbitrary: fc.constant<Who>('writer') },
  { weight: 1, arbitrary: fc.constantFrom<Who>('admin', 'other', 'reader') },
);

/**
 * §10: the owner and admins may see and change a post; anyone else gets 404 for a draft or a
 * scheduled post (its existence is not revealed) and 403 for a published one; a trashed post is 404
 * on every /posts route.
 */
function postAccess(post: KnownPost | undefined, who: Who): 'ok' | 403 | 404 {
  if (post === undefined || post.where === 'trash') return 404;
  if (who === 'admin' || post.owner === who) return 'ok';
  return post.status === 'published' ? 403 : 404;
}

/** §10: a trashed post is its owner's and admins'; anyone else's, or a post not in the trash, is 404. */
function trashAccess(post: KnownPost | undefined, who: Who): 'ok' | 404 {
  if (post === undefined || post.where !== 'trash') return 404;
  return who === 'admin' || post.owner === who ? 'ok' : 404;
}

/** The fixtures of FuzzTargets, as the oracles know them. */
function fixturePosts(targets: FuzzTargets) {
  const fixture = (id: number, owner: KnownPost['owner'], status: PostStatus, where: KnownPost['where']) => ({
    id: String(id),
    owner,
    status,
    where,
    revisions: 0,
    version: 1,
    fixture: true,
  });
  const revised = (post: FuzzTargets['revised']['own'], owner: KnownPost['owner']): KnownPost => ({
    ...fixture(post.id, owner, 'published', 'posts'),
    revisions: post.revisions,
    version: post.revisions + 1,
    cursor: post.cursor,
  });
  return {
    revisedOwn: revised(targets.revised.own, 'writer'),
    revisedOther: revised(targets.revised.other, 'other'),
    ownPublished: fixture(targets.ownPostIds[0], 'writer', 'published', 'posts'),
    ownDraft: fixture(targets.ownDraftId, 'writer', 'draft', 'posts'),
    ownScheduled: fixture(targets.ownScheduledId, 'writer', 'scheduled', 'posts'),
    otherPublished: fixture(targets.otherPostIds[0], 'other', 'published', 'posts'),
    hiddenDraft: fixture(targets.hiddenPostIds[0], 'other', 'draft', 'posts'),
    hiddenScheduled: fixture(targets.hiddenPostIds[1], 'other', 'scheduled', 'posts'),
    ownTrashed: targets.ownTrashedPostIds.map((id) => fixture(id, 'writer', 'published', 'trash')),
    otherTrashed: targets.otherTrashedPostIds.map((id) => fixture(id, 'other', 'published', 'trash')),
  };
}

/** Posts in the posts table, weighted towards those with revisions. */
function livePosts(targets: FuzzTargets): fc.Arbitrary<KnownPost> {
  const posts = fixturePosts(targets);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(posts.revisedOwn) },
    { weight: 2, arbitrary: fc.constant(posts.revisedOther) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        posts.ownPublished,
        posts.ownDraft,
        posts.ownScheduled,
        posts.otherPublished,
        posts.hiddenDraft,
        posts.hiddenScheduled,
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(...posts.ownTrashed, ...posts.otherTrashed) },
  );
}

/** A post the writer makes just before the request: in `state`, with `patches` revisions, maybe trashed. */
function setupPost(clock: number, patches: fc.Arbitrary<number>, trashed: boolean): fc.Arbitrary<KnownPost> {
  return fc.tuple(setupState, patches).map(([state, count]) => {
    const setup: PostSetup = { state, patches: count, trashed };
    const lifecycle = setupPostState(state, clock);
    return {
      id: '{id}',
      owner: 'writer',
      status: lifecycle.status,
      where: trashed ? 'trash' : 'posts',
      revisions: count,
      version: count + 1,
      fixture: false,
      setup,
      state: lifecycle,
    };
  });
}

/** Ids of posts, then well-formed ids no post has (from UNUSED_ID_FLOOR on), then malformed ones. */
function pathIds(posts: fc.Arbitrary<KnownPost>): fc.Arbitrary<PathId> {
  const generated = rawId
    .map((raw): PathId | null => {
      const { valid, id } = classifyId(raw);
      if (!valid) return { kind: 'malformed', id: raw };
      // Below the floor a post of the run may have the id: the oracle could not know it.
      return id! >= UNUSED_ID_FLOOR ? { kind: 'missing', id: raw } : null;
    })
    .filter((pathId): pathId is PathId => pathId !== null);
  return fc.oneof(
    { weight: 8, arbitrary: posts.map((post): PathId => ({ kind: 'post', post })) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: UNUSED_ID_FLOOR, max: Number.MAX_SAFE_INTEGER })
        .map((id): PathId => ({ kind: 'missing', id: String(id) })),
    },
    { weight: 3, arbitrary: generated },
  );
}

const pathIdText = (pathId: PathId): string => (pathId.kind === 'post' ? pathId.post.id : pathId.id);
const knownPost = (pathId: PathId): KnownPost | undefined => (pathId.kind === 'post' ? pathId.post : undefined);

/** A version segment: one of the post's revisions, its current version or the next, a huge one, or raw. */
type VersionChoice = { kind: 'revision'; index: number } | { kind: 'current' | 'next' } | { kind: 'raw'; raw: string };

const versionChoice: fc.Arbitrary<VersionChoice> = fc.oneof(
  { weight: 6, arbitrary: fc.nat({ max: 99 }).map((index): VersionChoice => ({ kind: 'revision', index })) },
  { weight: 1, arbitrary: fc.constantFrom<VersionChoice>({ kind: 'current' }, { kind: 'next' }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('2147483648', '4294967296', String(Number.MAX_SAFE_INTEGER), '999999')
      .map((raw): VersionChoice => ({ kind: 'raw', raw })),
  },
  { weight: 3, arbitrary: rawId.map((raw): VersionChoice => ({ kind: 'raw', raw })) },
);

/** The version segment as sent, and what it is: malformed, or a version the post has as a revision or not. */
function versionOf(
  choice: VersionChoice,
  post: KnownPost | undefined,
): { text: string; valid: boolean; exists: boolean } {
  const revisions = post?.revisions ?? 0;
  const version = post?.version ?? 1;
  if (choice.kind === 'raw') {
    const { valid, id } = classifyId(choice.raw);
    return { text: choice.raw, valid, exists: valid && id! <= revisions };
  }
  if (choice.kind === 'revision' && revisions > 0) {
    return { text: String(1 + (choice.index % revisions)), valid: true, exists: true };
  }
  return { text: String(choice.kind === 'next' ? version + 1 : version), valid: true, exists: false };
}

/** Whether a path segment has a malformed percent-encoding ('%zz', '%E0%A4%A'). */
function isUndecodable(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return false;
  } catch {
    return true;
  }
}

/**
 * A segment that cannot even be percent-decoded makes the request's path malformed: 400 is as right
 * as what the request would get otherwise (405 for a method the path does not serve, 403 for a
 * missing scope), which the contract does not order against it.
 */
const orUndecodable = (expected: number[], ...segments: string[]): number[] =>
  segments.some(isUndecodable) ? [...new Set([400, ...expected])] : expected;

/** Sometimes a trailing slash (Express routes match with and without it), sometimes a method the path does not serve. */
interface PathForm {
  trailingSlash: boolean;
  /** A method the route does not serve (405 with Allow, §2), or null. */
  otherMethod: string | null;
}

function pathForm(otherMethods: string[]): fc.Arbitrary<PathForm> {
  return fc.record({
    trailingSlash: fc.oneof({ weight: 7, arbitrary: fc.constant(false) }, fc.constant(true)),
    otherMethod: fc.oneof(
      { weight: 14, arbitrary: fc.constant<string | null>(null) },
      { weight: 1, arbitrary: fc.constantFrom(...otherMethods) },
    ),
  });
}

// --- query strings of the listings ----------------------------------------------------------------------------

const LIMIT_VALUES = [
  '',
  '0',
  '00',
  '1',
  '01',
  '2',
  '20',
  '100',
  '101',
  '-1',
  '1.5',
  '1e3',
  '+5',
  ' 5',
  '0x10',
  '\uff19',
];

/** A key of a listing's query: limit and cursor most of the time, the posts list's filters, junk. */
const listingKey = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('limit', 'cursor') },
  { weight: 1, arbitrary: fc.constantFrom('author', 'order', 'status', 'count', 'after', 'version') },
  { weight: 1, arbitrary: fc.constantFrom(...QUERY_KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

/** Cursors: the ones issued, near misses of them, others' and junk. */
function cursorValues(cursors: string[]): fc.Arbitrary<string> {
  const [first] = cursors;
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...cursors) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        first.slice(0, -1),
        `${first}A`,
        first.toUpperCase(),
        first.replace('.', ''),
        `${first.split('.')[0]}.${'A'.repeat(22)}`,
        'abc.def',
        '.',
        'a'.repeat(300),
      ),
    },
    { weight: 1, arbitrary: textArbitrary },
  );
}

/**
 * How a listing's query string reads: 'malformed' (a parameter other than limit and cursor, one of
 * them twice, a limit that is not a positive integer) whatever is listed; 'foreign-cursor' when only
 * the cursor is not one issued for this listing; else 'valid'.
 */
function readListingQuery(
  queryString: string,
  issuedCursor: string | undefined,
): 'malformed' | 'foreign-cursor' | 'valid' {
  const query = parseQueryString(queryString);
  for (const [key, value] of Object.entries(query)) {
    if (!['limit', 'cursor'].includes(key) || typeof value !== 'string') return 'malformed';
  }
  const { limit, cursor } = query as Record<string, string | undefined>;
  if (limit !== undefined && !isValidLimit(limit)) return 'malformed';
  return cursor !== undefined && cursor !== issuedCursor ? 'foreign-cursor' : 'valid';
}

/** The page size a valid query asks for (docs/api.md: 20 by default, at most 100). */
function pageSize(queryString: string): number {
  const { limit } = parseQueryString(queryString);
  if (typeof limit !== 'string') return 20;
  const digits = limit.replace(/^0+/, '');
  return digits.length > 3 ? 100 : Math.min(Number(digits), 100);
}

// --- bodies of the actions ------------------------------------------------------------------------------------

/** What a POST to an action (a restore) carries: nothing most of the time. */
type ActionBody =
  | { kind: 'none'; contentType?: string }
  | { kind: 'json' | 'malformed' | 'other-type'; contentType: string; body: Buffer };

const actionBody: fc.Arbitrary<ActionBody> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<ActionBody>({ kind: 'none' }) },
  // No content is no content of an unsupported type (RFC 9110 §15.5.16), whatever the header says.
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('application/json', 'text/plain')
      .map((contentType): ActionBody => ({ kind: 'none', contentType })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('{}', '[]', '{"title":"ignored?"}', '{"version":1}')
      .map((text): ActionBody => ({ kind: 'json', contentType: 'application/json', body: Buffer.from(text) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('{', '{"a":}', 'x', '{"a":1}}', '\u0000')
      .map((text): ActionBody => ({ kind: 'malformed', contentType: 'application/json', body: Buffer.from(text) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json')
      .map((contentType): ActionBody => ({ kind: 'other-type', contentType, body: Buffer.from('{}') })),
  },
);

/**
 * The statuses of an action with this body, given those it gets without one. Content of another type
 * is 415 and malformed JSON 400 (§2), but the contract orders neither against the post's own 403,
 * 404 or 412; and it does not say whether an action that takes no content refuses a JSON body (400)
 * or ignores it.
 */
function withActionBody(statuses: number[], body: ActionBody): number[] {
  const refusals = statuses.filter((status) => status >= 400);
  switch (body.kind) {
    case 'none':
      return statuses;
    case 'json':
      return [...new Set([...statuses, 400])];
    case 'malformed':
      return [...new Set([400, ...refusals])];
    case 'other-type':
      return [...new Set([415, ...refusals])];
  }
}

function actionHeaders(token: string, body: ActionBody): Record<string, string> {
  const headers: Record<string, string> = { authorization: bearer(token) };
  if (body.contentType !== undefined) headers['content-type'] = body.contentType;
  return headers;
}

// --- If-Match on a restore ------------------------------------------------------------------------------------

type IfMatchChoice = 'none' | 'any' | 'current' | 'weak-current' | 'stale' | 'never' | 'list' | 'unquoted' | 'open';

const ifMatchChoice: fc.Arbitrary<IfMatchChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<IfMatchChoice>('none', 'any', 'current') },
  { weight: 3, arbitrary: fc.constantFrom<IfMatchChoice>('weak-current', 'stale', 'never', 'list') },
  { weight: 1, arbitrary: fc.constantFrom<IfMatchChoice>('unquoted', 'open') },
);

function ifMatchHeader(choice: IfMatchChoice, id: string, version: number): string | undefined {
  const current = `"${id}.${version}"`;
  return {
    none: undefined,
    any: '*',
    current,
    'weak-current': `W/${current}`,
    stale: `"${id}.${version - 1}"`,
    never: NEVER_MATCHING_ETAG,
    list: `"x", ${current}`,
    unquoted: `${id}.${version}`,
    open: `"${id}.${version}`,
  }[choice];
}

/** 'malformed', or whether the header lets a write to the post at `version` through (RFC 9110 §13.1.1: strong comparison). */
function readIfMatch(header: string | undefined, id: string, version: number): 'malformed' | 'matches' | 'fails' {
  if (header === undefined) return 'matches';
  const list = readEntityTagList(fieldValue(header));
  if (list.kind === 'malformed') return 'malformed';
  if (list.kind === 'any') return 'matches';
  return list.tags.some((tag) => !tag.weak && tag.opaque === `"${id}.${version}"`) ? 'matches' : 'fails';
}

// --- what a success must answer --------------------------------------------------------------------------------

const REVISION_FIELDS = ['author', 'content', 'publishedAt', 'revisedAt', 'status', 'title', 'version'];
const POST_FIELDS = ['author', 'content', 'createdAt', 'id', 'publishedAt', 'status', 'title', 'updatedAt'];

const hasFields = (item: unknown, fields: string[]): boolean =>
  typeof item === 'object' && item !== null && Object.keys(item).sort().join() === fields.join();

/** Why a list of revisions of `post` breaks §10 (newest first, at most a page, after the cursor), or null. */
function revisionsListViolation(body: unknown, post: KnownPost, size: number, afterCursor: boolean): string | null {
  if (!Array.isArray(body)) return 'a 200 whose body is not a list';
  const revisions = body as Array<{ version: number; title: string }>;
  if (revisions.length > size) return `${revisions.length} revisions in a page of ${size}`;
  const newest = afterCursor ? post.revisions - 1 : post.revisions;
  const expected = Array.from({ length: Math.min(size, newest) }, (_, index) => newest - index);
  if (!revisions.every((revision) => hasFields(revision, REVISION_FIELDS))) return 'a revision with other fields';
  const versions = revisions.map((revision) => revision.version);
  if (versions.join() !== expected.join()) return `versions ${versions.join()}, expected ${expected.join()}`;
  const titled = revisions.find((revision) => revision.title !== setupTitle(revision.version));
  return titled === undefined ? null : `revision ${titled.version} is titled ${JSON.stringify(titled.title)}`;
}

/** Why the answer to a restore breaks §10: title, content and author of the revision, the post's state kept. */
function restoredViolation(body: unknown, post: KnownPost, title: string): string | null {
  if (!hasFields(body, POST_FIELDS)) return 'a post with other fields';
  const restored = body as Record<string, unknown>;
  if (restored.title !== title) return `title ${JSON.stringify(restored.title)}, expected ${JSON.stringify(title)}`;
  const state = post.state!;
  if (restored.status !== state.status) return `status ${String(restored.status)}, expected ${state.status}`;
  const { publishedAt } = restored;
  if (state.publishedAt === null)
    return publishedAt === null ? null : `publishedAt ${JSON.stringify(publishedAt)} of a draft`;
  if (typeof publishedAt !== 'string') return `publishedAt ${JSON.stringify(publishedAt)}`;
  if (state.publishedAt === 'now') {
    return Math.abs(Date.parse(publishedAt) - Date.now()) < 10 * 60_000 ? null : `publishedAt ${publishedAt}, not now`;
  }
  const wanted = new Date(state.publishedAt).toISOString();
  return publishedAt === wanted ? null : `publishedAt ${publishedAt}, expected ${wanted}`;
}

// --- the categories --------------------------------------------------------------------------------------------

/** A write and whether it aims at a fixture. */
type AimedRequest = [fuzz: FuzzRequest, aimsAtFixture: boolean];

/** Leaves out a write to a fixture that could succeed: fixtures stay as they were. */
function sparingFixtures(requests: fc.Arbitrary<AimedRequest>): fc.Arbitrary<FuzzRequest> {
  return requests
    .filter(([fuzz, aimsAtFixture]) => !(aimsAtFixture && fuzz.expected.some((status) => status < 300)))
    .map(([fuzz]) => fuzz);
}

/** GET /posts/{id}/revisions?… (scope posts:read; owner or admin; keyset-paginated like posts). */
function revisionsListRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const posts = fixturePosts(targets);
  const value = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...LIMIT_VALUES) },
    {
      weight: 3,
      arbitrary: cursorValues([
        posts.revisedOwn.cursor!,
        posts.revisedOther.cursor!,
        targets.cursor,
        targets.trashCursor,
      ]),
    },
    { weight: 1, arbitrary: textArbitrary },
  );
  return fc
    .record({
      pathId: pathIds(livePosts(targets)),
      who: principal,
      form: pathForm(['PUT', 'PATCH', 'DELETE', 'POST']),
      query: queryStrings(listingKey, value, 4),
    })
    .map(({ pathId, who, form, query: { queryString, requestId } }) => {
      const post = knownPost(pathId);
      const path = `/posts/${pathIdText(pathId)}/revisions${form.trailingSlash ? '/' : ''}?${queryString}`;
      const headers: Record<string, string> = { authorization: bearer(tokenOf(who, targets)) };
      if (requestId !== null) headers['x-request-id'] = requestId;
      const reading = readListingQuery(queryString, post?.cursor);
      const access = postAccess(post, who);
      let expected: number[];
      if (form.otherMethod !== null) expected = [405];
      else if (pathId.kind === 'malformed' || reading === 'malformed') expected = [400];
      // A cursor is issued for one post's revisions: whether it is foreign depends on the post, which
      // the contract does not order against the post's own 403 or 404.
      else if (access !== 'ok') expected = reading === 'foreign-cursor' ? [400, access] : [access];
      else expected = [reading === 'foreign-cursor' ? 400 : 200];
      const size = pageSize(queryString);
      const afterCursor = parseQueryString(queryString).cursor !== undefined;
      return request({
        category: 'revisions-list',
        method: form.otherMethod ?? 'GET',
        path,
        headers,
        valid: expected.includes(200),
        expected: orUndecodable(expected, pathIdText(pathId)),
        successBodyViolation: (body) => revisionsListViolation(body, post!, size, afterCursor),
      });
    })
    .filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/** GET /posts/{id}/revisions/{version}: one revision (owner or admin; 404 when there is none). */
function revisionOneRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      pathId: pathIds(livePosts(targets)),
      version: versionChoice,
      who: principal,
      form: pathForm(['PUT', 'PATCH', 'DELETE', 'POST']),
    })
    .map(({ pathId, version: choice, who, form }) => {
      const post = knownPost(pathId);
      const version = versionOf(choice, post);
      const access = postAccess(post, who);
      let expected: number[];
      if (form.otherMethod !== null) expected = [405];
      else if (pathId.kind === 'malformed' || !version.valid) expected = [400];
      else if (access !== 'ok') expected = [access];
      else expected = [version.exists ? 200 : 404];
      return request({
        category: 'revision-one',
        method: form.otherMethod ?? 'GET',
        path: `/posts/${pathIdText(pathId)}/revisions/${version.text}${form.trailingSlash ? '/' : ''}`,
        headers: { authorization: bearer(tokenOf(who, targets)) },
        valid: expected.includes(200),
        expected: orUndecodable(expected, pathIdText(pathId), version.text),
        successBodyViolation: (body) => {
          if (!hasFields(body, REVISION_FIELDS)) return 'a revision with other fields';
          const revision = body as { version: unknown; title: unknown };
          if (revision.version !== Number(version.text)) return `version ${String(revision.version)}`;
          return revision.title === setupTitle(Number(version.text)) ? null : `title ${String(revision.title)}`;
        },
      });
    })
    .filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/**
 * POST /posts/{id}/revisions/{version}/restore (posts:write; owner or admin; If-Match honoured): 200
 * with the post, its title, content and author the revision's, its state kept. A missing revision
 * is 404 whatever If-Match says: §6 puts 404 before 412, and RFC 9110 §13.2.1 has a server ignore
 * preconditions when the request would fail without them.
 */
function revisionRestoreRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const posts = fc.oneof(
    { weight: 5, arbitrary: setupPost(targets.clock, fc.integer({ min: 1, max: 3 }), false) },
    { weight: 3, arbitrary: livePosts(targets) },
  );
  return sparingFixtures(
    fc
      .record({
        pathId: pathIds(posts),
        version: versionChoice,
        who: principal,
        ifMatch: ifMatchChoice,
        body: actionBody,
        form: pathForm(['GET', 'PUT', 'PATCH', 'DELETE']),
      })
      .map(({ pathId, version: choice, who, ifMatch: matchChoice, body, form }): AimedRequest => {
        const post = knownPost(pathId);
        const id = pathIdText(pathId);
        const version = versionOf(choice, post);
        const ifMatch = ifMatchHeader(matchChoice, id, post?.version ?? 1);
        const precondition = readIfMatch(ifMatch, id, post?.version ?? 1);
        const access = postAccess(post, who);
        const headers = actionHeaders(tokenOf(who, targets), body);
        if (ifMatch !== undefined) headers['if-match'] = ifMatch;
        let expected: number[];
        if (form.otherMethod !== null) expected = [405];
        else if (who === 'reader') expected = [403];
        else {
          let statuses: number[];
          if (pathId.kind === 'malformed' || !version.valid) statuses = [400];
          // The contract does not order a malformed If-Match against the post's 403 or 404 (nor does
          // the if-match category of fuzz-arbitraries.ts).
          else if (precondition === 'malformed')
            statuses = access === 'ok' && version.exists ? [400] : [400, access === 'ok' ? 404 : access];
          else if (access !== 'ok') statuses = [access];
          else if (!version.exists) statuses = [404];
          else statuses = [precondition === 'matches' ? 200 : 412];
          expected = withActionBody(statuses, body);
        }
        const method = form.otherMethod ?? 'POST';
        const title = setupTitle(Number(version.text));
        return [
          request({
            category: 'revision-restore',
            method,
            path: `/posts/${id}/revisions/${version.text}/restore${form.trailingSlash ? '/' : ''}`,
            headers: form.otherMethod === null ? headers : { authorization: bearer(tokenOf(who, targets)) },
            body: form.otherMethod === null && body.kind !== 'none' ? body.body : undefined,
            valid: expected.includes(200),
            expected: orUndecodable(expected, id, version.text),
            successBodyViolation: (answer: unknown) => restoredViolation(answer, post!, title),
            setup: post?.setup,
            successEffect: 'keeps-revision',
          }),
          post?.fixture ?? false,
        ];
      }),
  ).filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/** GET /trash?… (scope posts:write): the caller's trashed posts, every one for admin, newest post first. */
function trashListRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const value = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...LIMIT_VALUES) },
    {
      weight: 3,
      arbitrary: cursorValues([targets.trashCursor, targets.revised.own.cursor, targets.cursor]),
    },
    { weight: 1, arbitrary: textArbitrary },
  );
  const newestOwnTrashed = Math.max(...targets.ownTrashedPostIds);
  return fc
    .record({
      who: principal,
      form: pathForm(['POST', 'PUT', 'PATCH', 'DELETE']),
      query: queryStrings(listingKey, value, 4),
    })
    .map(({ who, form, query: { queryString, requestId } }) => {
      const headers: Record<string, string> = { authorization: bearer(tokenOf(who, targets)) };
      if (requestId !== null) headers['x-request-id'] = requestId;
      const reading = readListingQuery(queryString, targets.trashCursor);
      // A token in the query string is 400 invalid_request before any scope is checked (contract §4).
      const tokenInQuery = Object.hasOwn(parseQueryString(queryString), 'access_token');
      const expected =
        form.otherMethod !== null
          ? [405]
          : tokenInQuery
            ? [400]
            : who === 'reader'
              ? [403]
              : [reading === 'valid' ? 200 : 400];
      const size = pageSize(queryString);
      const afterCursor = parseQueryString(queryString).cursor !== undefined;
      return request({
        category: 'trash-list',
        method: form.otherMethod ?? 'GET',
        path: `/trash${form.trailingSlash ? '/' : ''}?${queryString}`,
        headers,
        valid: expected.includes(200),
        expected,
        successBodyViolation: (body) => {
          if (!Array.isArray(body)) return 'a 200 whose body is not a list';
          const trashed = body as Array<{ id: number }>;
          if (trashed.length > size) return `${trashed.length} posts in a page of ${size}`;
          if (!trashed.every((post) => hasFields(post, [...POST_FIELDS, 'deletedAt'].sort()))) {
            return 'a trashed post with other fields';
          }
          const ids = trashed.map((post) => post.id);
          if (ids.some((id, index) => index > 0 && id >= ids[index - 1])) return `ids ${ids.join()} not newest first`;
          if (afterCursor && ids.some((id) => id >= newestOwnTrashed)) return `ids ${ids.join()} not after the cursor`;
          const others =
            who === 'writer' ? targets.otherTrashedPostIds : who === 'other' ? targets.ownTrashedPostIds : [];
          const foreign = ids.find((id) => others.includes(id));
          if (foreign !== undefined) return `someone else's trashed post ${foreign} is listed`;
          // The other writer's trash holds its fixtures only: no setup post is its.
          const stray = who === 'other' ? ids.find((id) => !targets.otherTrashedPostIds.includes(id)) : undefined;
          return stray === undefined ? null : `post ${stray} is listed in the other writer's trash`;
        },
      });
    })
    .filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/** Posts a trash route aims at: the writer's setup posts in the trash, trashed and live fixtures. */
function trashTargets(targets: FuzzTargets): fc.Arbitrary<PathId> {
  const posts = fixturePosts(targets);
  return pathIds(
    fc.oneof(
      { weight: 5, arbitrary: setupPost(targets.clock, fc.integer({ min: 0, max: 2 }), true) },
      { weight: 2, arbitrary: fc.constantFrom(...posts.ownTrashed, ...posts.otherTrashed) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(posts.ownPublished, posts.ownDraft, posts.revisedOwn, posts.hiddenDraft),
      },
    ),
  );
}

/** POST /trash/{id}/restore (posts:write): back with its id and state, as a new version; 404 unless in the caller's trash. */
function trashRestoreRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return sparingFixtures(
    fc
      .record({
        pathId: trashTargets(targets),
        who: principal,
        body: actionBody,
        form: pathForm(['GET', 'PUT', 'PATCH', 'DELETE']),
      })
      .map(({ pathId, who, body, form }): AimedRequest => {
        const post = knownPost(pathId);
        const access = trashAccess(post, who);
        let expected: number[];
        if (form.otherMethod !== null) expected = [405];
        else if (who === 'reader') expected = [403];
        else expected = withActionBody([pathId.kind === 'malformed' ? 400 : access === 'ok' ? 200 : access], body);
        return [
          request({
            category: 'trash-restore',
            method: form.otherMethod ?? 'POST',
            path: `/trash/${pathIdText(pathId)}/restore${form.trailingSlash ? '/' : ''}`,
            headers:
              form.otherMethod === null
                ? actionHeaders(tokenOf(who, targets), body)
                : { authorization: bearer(tokenOf(who, targets)) },
            body: form.otherMethod === null && body.kind !== 'none' ? body.body : undefined,
            valid: expected.includes(200),
            expected: orUndecodable(expected, pathIdText(pathId)),
            successBodyViolation: (answer: unknown) =>
              restoredViolation(answer, post!, setupTitle(post!.revisions + 1)),
            setup: post?.setup,
            successEffect: 'leaves-trash',
          }),
          post?.fixture ?? false,
        ];
      }),
  ).filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/** DELETE /trash/{id} (posts:write): the post and its revisions erased, 204; 404 unless in the caller's trash. */
function trashPurgeRequests(targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  return sparingFixtures(
    fc
      .record({
        pathId: trashTargets(targets),
        who: principal,
        form: pathForm(['GET', 'POST', 'PUT', 'PATCH']),
      })
      .map(({ pathId, who, form }): AimedRequest => {
        const post = knownPost(pathId);
        const access = trashAccess(post, who);
        const expected =
          form.otherMethod !== null
            ? [405]
            : who === 'reader'
              ? [403]
              : [pathId.kind === 'malformed' ? 400 : access === 'ok' ? 204 : access];
        return [
          request({
            category: 'trash-purge',
            method: form.otherMethod ?? 'DELETE',
            path: `/trash/${pathIdText(pathId)}${form.trailingSlash ? '/' : ''}`,
            headers: {
              authorization: bearer(tokenOf(who, targets)),
              ...(form.otherMethod === 'PUT' || form.otherMethod === 'PATCH' ? json : {}),
            },
            valid: expected.includes(204),
            expected: orUndecodable(expected, pathIdText(pathId)),
            setup: post?.setup,
            successEffect: 'erases',
          }),
          post?.fixture ?? false,
        ];
      }),
  ).filter((fuzz) => fuzz.path.length <= MAX_URL_LENGTH);
}

/** The generator of each category of the revisions and trash routes. */
export function editorialArbitraries(targets: FuzzTargets): Record<EditorialCategory, fc.Arbitrary<FuzzRequest>> {
  return {
    'revisions-list': revisionsListRequests(targets),
    'revision-one': revisionOneRequests(targets),
    'revision-restore': revisionRestoreRequests(targets),
    'trash-list': trashListRequests(targets),
    'trash-restore': trashRestoreRequests(targets),
    'trash-purge': trashPurgeRequests(targets),
  };
}
