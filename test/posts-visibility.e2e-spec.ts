import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../src/auth/principal.js';
import type { PostResource, PostRevisionResource, TrashedPostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { send, type Client, type HttpResult } from './helpers/http.js';
import { expectProblem, useTestApp, type ProblemBody } from './helpers/use-test-app.js';

// Contract §10 (visibility, revisions, trash) with §4 (scopes, ownership), as one matrix:
// route × principal × the state of the post the request is about.

type Principal = 'owner' | 'other writer' | 'reader' | 'admin' | 'anonymous';
type State = 'draft' | 'scheduled' | 'published' | 'trashed';

/**
 * What a principal gets. Numbers are the status of a request about the post; `listed` / `not listed`
 * are a 200 listing that does or does not contain it; the 403s say which problem type explains them:
 * the scope guard's (before any lookup) or the ownership check's.
 */
type Outcome = 200 | 204 | 401 | 404 | '403 insufficient_scope' | '403 forbidden' | 'listed' | 'not listed';

type RouteName =
  | 'GET /posts/{id}'
  | 'GET /posts'
  | 'GET /posts?status=draft'
  | 'GET /posts?status=scheduled'
  | 'GET /posts/{id}/revisions'
  | 'GET /posts/{id}/revisions/{version}'
  | 'POST /posts/{id}/revisions/{version}/restore'
  | 'PUT /posts/{id}'
  | 'PATCH /posts/{id}'
  | 'DELETE /posts/{id}'
  | 'GET /trash'
  | 'POST /trash/{id}/restore'
  | 'DELETE /trash/{id}';

type Row = [RouteName, State, Record<Principal, Outcome>];

const L = 'listed';
const NL = 'not listed';
const SCOPE = '403 insufficient_scope';
const OWNER = '403 forbidden';

// The expectations, written out case by case from contract §10 and §4. Columns: owner, other writer
// (posts:read + posts:write), reader (posts:read), admin, anonymous (no credentials).
// prettier-ignore
const MATRIX: Row[] = [
  ['GET /posts/{id}', 'draft',     { owner: 200, 'other writer': 404, reader: 404, admin: 200, anonymous: 401 }],
  ['GET /posts/{id}', 'scheduled', { owner: 200, 'other writer': 404, reader: 404, admin: 200, anonymous: 401 }],
  ['GET /posts/{id}', 'published', { owner: 200, 'other writer': 200, reader: 200, admin: 200, anonymous: 401 }],
  ['GET /posts/{id}', 'trashed',   { owner: 404, 'other writer': 404, reader: 404, admin: 404, anonymous: 401 }],

  ['GET /posts', 'draft',     { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],
  ['GET /posts', 'scheduled', { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],
  ['GET /posts', 'published', { owner: L,  'other writer': L,  reader: L,  admin: L,  anonymous: 401 }],
  ['GET /posts', 'trashed',   { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],

  ['GET /posts?status=draft', 'draft',     { owner: L,  'other writer': NL, reader: NL, admin: L,  anonymous: 401 }],
  ['GET /posts?status=draft', 'scheduled', { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],
  ['GET /posts?status=draft', 'published', { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],
  ['GET /posts?status=draft', 'trashed',   { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],

  ['GET /posts?status=scheduled', 'draft',     { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],
  ['GET /posts?status=scheduled', 'scheduled', { owner: L,  'other writer': NL, reader: NL, admin: L,  anonymous: 401 }],
  ['GET /posts?status=scheduled', 'published', { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],
  ['GET /posts?status=scheduled', 'trashed',   { owner: NL, 'other writer': NL, reader: NL, admin: NL, anonymous: 401 }],

  ['GET /posts/{id}/revisions', 'draft',     { owner: 200, 'other writer': 404,   reader: 404,   admin: 200, anonymous: 401 }],
  ['GET /posts/{id}/revisions', 'scheduled', { owner: 200, 'other writer': 404,   reader: 404,   admin: 200, anonymous: 401 }],
  ['GET /posts/{id}/revisions', 'published', { owner: 200, 'other writer': OWNER, reader: OWNER, admin: 200, anonymous: 401 }],
  ['GET /posts/{id}/revisions', 'trashed',   { owner: 404, 'other writer': 404,   reader: 404,   admin: 404, anonymous: 401 }],

  ['GET /posts/{id}/revisions/{version}', 'draft',     { owner: 200, 'other writer': 404,   reader: 404,   admin: 200, anonymous: 401 }],
  ['GET /posts/{id}/revisions/{version}', 'scheduled', { owner: 200, 'other writer': 404,   reader: 404,   admin: 200, anonymous: 401 }],
  ['GET /posts/{id}/revisions/{version}', 'published', { owner: 200, 'other writer': OWNER, reader: OWNER, admin: 200, anonymous: 401 }],
  ['GET /posts/{id}/revisions/{version}', 'trashed',   { owner: 404, 'other writer': 404,   reader: 404,   admin: 404, anonymous: 401 }],

  ['POST /posts/{id}/revisions/{version}/restore', 'draft',     { owner: 200, 'other writer': 404,   reader: SCOPE, admin: 200, anonymous: 401 }],
  ['POST /posts/{id}/revisions/{version}/restore', 'scheduled', { owner: 200, 'other writer': 404,   reader: SCOPE, admin: 200, anonymous: 401 }],
  ['POST /posts/{id}/revisions/{version}/restore', 'published', { owner: 200, 'other writer': OWNER, reader: SCOPE, admin: 200, anonymous: 401 }],
  ['POST /posts/{id}/revisions/{version}/restore', 'trashed',   { owner: 404, 'other writer': 404,   reader: SCOPE, admin: 404, anonymous: 401 }],

  ['PUT /posts/{id}', 'draft',     { owner: 200, 'other writer': 404,   reader: SCOPE, admin: 200, anonymous: 401 }],
  ['PUT /posts/{id}', 'scheduled', { owner: 200, 'other writer': 404,   reader: SCOPE, admin: 200, anonymous: 401 }],
  ['PUT /posts/{id}', 'published', { owner: 200, 'other writer': OWNER, reader: SCOPE, admin: 200, anonymous: 401 }],
  ['PUT /posts/{id}', 'trashed',   { owner: 404, 'other writer': 404,   reader: SCOPE, admin: 404, anonymous: 401 }],

  ['PATCH /posts/{id}', 'draft',     { owner: 200, 'other writer': 404,   reader: SCOPE, admin: 200, anonymous: 401 }],
  ['PATCH /posts/{id}', 'scheduled', { owner: 200, 'other writer': 404,   reader: SCOPE, admin: 200, anonymous: 401 }],
  ['PATCH /posts/{id}', 'published', { owner: 200, 'other writer': OWNER, reader: SCOPE, admin: 200, anonymous: 401 }],
  ['PATCH /posts/{id}', 'trashed',   { owner: 404, 'other writer': 404,   reader: SCOPE, admin: 404, anonymous: 401 }],

  ['DELETE /posts/{id}', 'draft',     { owner: 204, 'other writer': 404,   reader: SCOPE, admin: 204, anonymous: 401 }],
  ['DELETE /posts/{id}', 'scheduled', { owner: 204, 'other writer': 404,   reader: SCOPE, admin: 204, anonymous: 401 }],
  ['DELETE /posts/{id}', 'published', { owner: 204, 'other writer': OWNER, reader: SCOPE, admin: 204, anonymous: 401 }],
  ['DELETE /posts/{id}', 'trashed',   { owner: 404, 'other writer': 404,   reader: SCOPE, admin: 404, anonymous: 401 }],

  ['GET /trash', 'draft',     { owner: NL, 'other writer': NL, reader: SCOPE, admin: NL, anonymous: 401 }],
  ['GET /trash', 'scheduled', { owner: NL, 'other writer': NL, reader: SCOPE, admin: NL, anonymous: 401 }],
  ['GET /trash', 'published', { owner: NL, 'other writer': NL, reader: SCOPE, admin: NL, anonymous: 401 }],
  ['GET /trash', 'trashed',   { owner: L,  'other writer': NL, reader: SCOPE, admin: L,  anonymous: 401 }],

  ['POST /trash/{id}/restore', 'draft',     { owner: 404, 'other writer': 404, reader: SCOPE, admin: 404, anonymous: 401 }],
  ['POST /trash/{id}/restore', 'scheduled', { owner: 404, 'other writer': 404, reader: SCOPE, admin: 404, anonymous: 401 }],
  ['POST /trash/{id}/restore', 'published', { owner: 404, 'other writer': 404, reader: SCOPE, admin: 404, anonymous: 401 }],
  ['POST /trash/{id}/restore', 'trashed',   { owner: 200, 'other writer': 404, reader: SCOPE, admin: 200, anonymous: 401 }],

  ['DELETE /trash/{id}', 'draft',     { owner: 404, 'other writer': 404, reader: SCOPE, admin: 404, anonymous: 401 }],
  ['DELETE /trash/{id}', 'scheduled', { owner: 404, 'other writer': 404, reader: SCOPE, admin: 404, anonymous: 401 }],
  ['DELETE /trash/{id}', 'published', { owner: 404, 'other writer': 404, reader: SCOPE, admin: 404, anonymous: 401 }],
  ['DELETE /trash/{id}', 'trashed',   { owner: 204, 'other writer': 404, reader: SCOPE, admin: 204, anonymous: 401 }],
];

const PRINCIPALS: Principal[] = ['owner', 'other writer', 'reader', 'admin', 'anonymous'];

const CASES = MATRIX.flatMap(([route, state, outcomes]) =>
  PRINCIPALS.map((principal) => ({ route, state, principal, outcome: outcomes[principal] })),
);

const WHO: Record<Principal, string> = {
  owner: 'the owner',
  'other writer': 'another writer',
  reader: 'a reader',
  admin: 'an admin',
  anonymous: 'an anonymous caller',
};

const WHAT: Record<State, string> = {
  draft: 'a draft',
  scheduled: 'a post scheduled a year ahead',
  published: 'a published post',
  trashed: 'a trashed post',
};

function caseName({ route, state, principal, outcome }: (typeof CASES)[number]): string {
  if (outcome === 'listed') return `${WHO[principal]} finds ${WHAT[state]} in ${route}`;
  if (outcome === 'not listed') return `${WHO[principal]} does not find ${WHAT[state]} in ${route}`;
  return `${WHO[principal]} gets ${outcome} from ${route} on ${WHAT[state]}`;
}

/** A well-formed id no post has: its 404 is what a hidden post's must look like. */
const NONEXISTENT_ID = 987_654_321;
const YEAR_MS = 365 * 24 * 60 * 60 * 1000;
/** The revision every fixture has: its state before the owner's one PATCH (created as version 1). */
const FIRST_VERSION = 1;

interface Fixture {
  id: number;
  /** Unique to this post, so a listing filtered by it answers about this post alone. */
  author: string;
  /** The title it was created with: revision 1's. */
  originalTitle: string;
}

interface RouteUnderTest {
  send(as: Client, post: Fixture): Promise<HttpResult>;
  /** Whether a success changes the post (then checkSuccess replaces the check that "nothing changed"). */
  writes: boolean;
}

const ROUTES: Record<RouteName, RouteUnderTest> = {
  'GET /posts/{id}': { writes: false, send: (as, post) => as.get(`/posts/${post.id}`) },
  'GET /posts': {
    writes: false,
    send: (as, post) => as.get(`/posts?limit=100&author=${encodeURIComponent(post.author)}`),
  },
  'GET /posts?status=draft': {
    writes: false,
    send: (as, post) => as.get(`/posts?status=draft&limit=100&author=${encodeURIComponent(post.author)}`),
  },
  'GET /posts?status=scheduled': {
    writes: false,
    send: (as, post) => as.get(`/posts?status=scheduled&limit=100&author=${encodeURIComponent(post.author)}`),
  },
  'GET /posts/{id}/revisions': { writes: false, send: (as, post) => as.get(`/posts/${post.id}/revisions`) },
  'GET /posts/{id}/revisions/{version}': {
    writes: false,
    send: (as, post) => as.get(`/posts/${post.id}/revisions/${FIRST_VERSION}`),
  },
  'POST /posts/{id}/revisions/{version}/restore': {
    writes: true,
    send: (as, post) => as.post(`/posts/${post.id}/revisions/${FIRST_VERSION}/restore`),
  },
  'PUT /posts/{id}': {
    writes: true,
    send: (as, post) => as.put(`/posts/${post.id}`, buildPost({ title: 'replaced', author: post.author })),
  },
  'PATCH /posts/{id}': { writes: true, send: (as, post) => as.patch(`/posts/${post.id}`, { title: 'patched' }) },
  'DELETE /posts/{id}': { writes: true, send: (as, post) => as.delete(`/posts/${post.id}`) },
  'GET /trash': { writes: false, send: (as) => as.get('/trash?limit=100') },
  'POST /trash/{id}/restore': { writes: true, send: (as, post) => as.post(`/trash/${post.id}/restore`) },
  'DELETE /trash/{id}': { writes: true, send: (as, post) => as.delete(`/trash/${post.id}`) },
};

describe('who sees and changes which post (contract §10, visibility matrix)', () => {
  const context = useTestApp();
  const { api } = context;
  const tokens = {} as Record<Principal, string | null>;
  const as = (principal: Principal): Client => api.as(tokens[principal]);

  beforeAll(async () => {
    const { app } = context;
    tokens.owner = app.writerToken;
    tokens['other writer'] = await app.createToken([Scope.postsRead, Scope.postsWrite], { name: 'other-writer' });
    tokens.reader = await app.createToken([Scope.postsRead], { name: 'reader' });
    tokens.admin = app.adminToken;
    tokens.anonymous = null;
  });

  /** A new post of the owner's in `state`, patched once so that it has revision 1. */
  const createFixture = async (state: State): Promise<Fixture> => {
    const author = `visibility ${randomUUID()}`;
    const lifecycle =
      state === 'draft'
        ? { status: 'draft' }
        : state === 'scheduled'
          ? { status: 'scheduled', publishedAt: new Date(Date.now() + YEAR_MS).toISOString() }
          : {};
    const input = buildPost({ author });
    const created = await as('owner').post<PostResource>('/posts', { ...input, ...lifecycle });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe(state === 'trashed' ? 'published' : state);
    const post = { id: created.body.id, author, originalTitle: input.title };

    const patched = await as('owner').patch<PostResource>(`/posts/${post.id}`, { title: `${input.title}, revised` });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('etag')).toBe(`"${post.id}.2"`);
    if (state === 'trashed') expect((await as('owner').delete(`/posts/${post.id}`)).status).toBe(204);
    return post;
  };

  /** Every item of a listing, following rel="next" links. */
  const walk = async <T>(caller: Client, first: HttpResult): Promise<T[]> => {
    const items: T[] = [];
    for (let response = first; ;) {
      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
      items.push(...(response.body as T[]));
      const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
      if (next === undefined) return items;
      response = await send('GET', new URL(next, context.app.baseUrl).href, undefined, caller.headers());
    }
  };

  const ownersTrashItem = async (id: number): Promise<TrashedPostResource | undefined> => {
    const owner = as('owner');
    const items = await walk<TrashedPostResource>(owner, await owner.get('/trash?limit=100'));
    return items.find((item) => item.id === id);
  };

  /**
   * What the owner can see of the post: its ETag and body, or, in the trash, its trash item. A request
   * that was refused, or only read, must leave this exactly as it was.
   */
  const ownersView = async (post: Fixture, state: State): Promise<unknown> => {
    if (state === 'trashed') {
      const item = await ownersTrashItem(post.id);
      expect(item, `post ${post.id} in the owner's trash`).toBeDefined();
      return item;
    }
    const response = await as('owner').get(`/posts/${post.id}`);
    expect(response.status).toBe(200);
    return { etag: response.headers.get('etag'), body: response.body };
  };

  /** Problem bodies compared with the id taken out of the detail (it may name the id). */
  const comparable = (problem: ProblemBody, id: number) => ({
    type: problem.type,
    title: problem.title,
    status: problem.status,
    detail: problem.detail.replaceAll(String(id), '{id}'),
    members: Object.keys(problem).sort(),
  });

  /** What a success did, beyond its status: the change a write made, the post a read showed. */
  const checkSuccess = async (
    route: RouteName,
    state: State,
    post: Fixture,
    response: HttpResult,
    before: unknown,
  ): Promise<void> => {
    const owner = as('owner');
    switch (route) {
      case 'GET /posts/{id}': {
        const view = before as { etag: string; body: PostResource };
        expect(response.headers.get('etag')).toBe(view.etag);
        expect(response.body).toEqual(view.body);
        return;
      }
      case 'GET /posts/{id}/revisions':
        expect((response.body as PostRevisionResource[]).map((revision) => revision.version)).toEqual([FIRST_VERSION]);
        return;
      case 'GET /posts/{id}/revisions/{version}':
        expect(response.body).toMatchObject({ version: FIRST_VERSION, title: post.originalTitle });
        return;
      case 'POST /posts/{id}/revisions/{version}/restore':
      case 'PUT /posts/{id}':
      case 'PATCH /posts/{id}': {
        // A revision restore brings back revision 1's title; PUT and PATCH send their own.
        const title =
          route === 'PUT /posts/{id}' ? 'replaced' : route === 'PATCH /posts/{id}' ? 'patched' : post.originalTitle;
        expect(response.body).toMatchObject({ id: post.id, title, status: state });
        expect(response.headers.get('etag')).toBe(`"${post.id}.3"`);
        const after = await owner.get(`/posts/${post.id}`);
        expect(after.headers.get('etag')).toBe(`"${post.id}.3"`);
        expect(after.body).toEqual(response.body);
        return;
      }
      case 'DELETE /posts/{id}':
        expectProblem(await owner.get(`/posts/${post.id}`), 404, 'not-found');
        expect(await ownersTrashItem(post.id)).toMatchObject({ id: post.id, status: state });
        return;
      case 'POST /trash/{id}/restore': {
        expect(response.body).toMatchObject({ id: post.id, status: 'published' });
        const after = await owner.get(`/posts/${post.id}`);
        expect(after.status).toBe(200);
        expect(after.body).toEqual(response.body);
        expect(await ownersTrashItem(post.id)).toBeUndefined();
        return;
      }
      case 'DELETE /trash/{id}':
        expect(await ownersTrashItem(post.id)).toBeUndefined();
        expectProblem(await owner.get(`/posts/${post.id}`), 404, 'not-found');
        return;
      default:
        return;
    }
  };

  describe.each(Object.keys(ROUTES) as RouteName[])('%s', (routeName) => {
    const route = ROUTES[routeName];

    for (const entry of CASES.filter((candidate) => candidate.route === routeName)) {
      it(caseName(entry), async () => {
        const { state, principal, outcome } = entry;
        const post = await createFixture(state);
        const before = await ownersView(post, state);
        const caller = as(principal);

        const response = await route.send(caller, post);

        if (outcome === 'listed' || outcome === 'not listed') {
          expect(response.status).toBe(200);
          const ids = (await walk<PostResource>(caller, response)).map((item) => item.id);
          if (outcome === 'listed') expect(ids).toContain(post.id);
          else expect(ids).not.toContain(post.id);
        } else if (outcome === 401) {
          expectProblem(response, 401, 'unauthorized');
          expect(response.headers.get('www-authenticate')).toBe('Bearer realm="posts"');
        } else if (outcome === SCOPE) {
          expectProblem(response, 403, 'insufficient-scope');
          expect(response.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
        } else if (outcome === OWNER) {
          expectProblem(response, 403, 'forbidden');
        } else if (outcome === 404) {
          const hidden = expectProblem(response, 404, 'not-found');
          const missing = expectProblem(await route.send(caller, { ...post, id: NONEXISTENT_ID }), 404, 'not-found');
          expect(comparable(hidden, post.id)).toEqual(comparable(missing, NONEXISTENT_ID));
        } else {
          // Soft: with a wrong success status the checks below still tell whether the change was made.
          expect.soft(response.status, response.text).toBe(outcome);
        }

        const succeeded = response.status < 300;
        if (succeeded) await checkSuccess(routeName, state, post, response, before);
        if (!succeeded || !route.writes) expect(await ownersView(post, state)).toEqual(before);
      });
    }
  });

  it('covers every route, state and principal exactly once', () => {
    const keys = CASES.map(({ route, state, principal }) => `${route} ${state} ${principal}`);
    expect(new Set(keys).size).toBe(Object.keys(ROUTES).length * 4 * PRINCIPALS.length);
    expect(keys).toHaveLength(new Set(keys).size);
  });
});
