import { randomInt } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { effectiveScopes, Scope, type Principal } from '../src/auth/principal.js';
import { EventSequencer } from '../src/events/event-sequencer.js';
import { PostsService } from '../src/posts/posts.service.js';
import { buildPost } from './factories/post.factory.js';
import {
  describeRequest,
  fuzzArbitraries,
  SCHEDULED_IN_MS,
  setupRequests,
  type Category,
  type FuzzRequest,
  type FuzzTargets,
  type PostSetup,
  type RevisedPost,
} from './helpers/fuzz-arbitraries.js';
import { editorialArbitraries } from './helpers/fuzz-editorial-routes.js';
import type { HttpResult } from './helpers/http.js';
import { useTestApp } from './helpers/use-test-app.js';

// Issue 8, item 1: thousands of generated malformed requests (bodies, headers, paths, query strings)
// against the real app, on SQLite and on MySQL/MariaDB. Every one must get a 4xx problem; the few
// that happen to be valid must succeed; none may get a 5xx or hang; and the database must end up
// holding exactly what the valid ones created. FUZZ_SEED=<n> replays a run.
//
// The routes of contract §10 (revisions, trash) and the state members of a post body are fuzzed the
// same way. A valid write needs a post to change that is not a fixture: such requests name a setup
// post, made (and patched, and deleted) just before they are sent, so that its state, and so the
// oracle, is known exactly.

const RUNS: Record<Category, number> = {
  'post-body': 2_200,
  'put-body': 1_000,
  'patch-body': 1_000,
  'raw-body': 1_000,
  'content-type': 700,
  authorization: 900,
  'if-match': 900,
  'if-none-match': 500,
  'idempotency-key': 700,
  'api-key-expiry': 700,
  path: 1_200,
  query: 1_200,
  'events-query': 1_000,
  'revisions-list': 1_000,
  'revision-one': 1_000,
  'revision-restore': 1_000,
  'trash-list': 1_000,
  'trash-restore': 1_000,
  'trash-purge': 1_000,
};
const MINIMUM_REQUESTS = 16_000;
const REQUEST_TIMEOUT_MS = 5_000;
const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

const seed = process.env.FUZZ_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.FUZZ_SEED);

interface Exchange {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

class Tally {
  total = 0;
  serverErrors = 0;
  timeouts = 0;
  transportErrors = 0;
  readonly byCategory = new Map<Category, number>();
  readonly byStatus = new Map<number, number>();
  readonly successesByCategory = new Map<Category, number>();
  readonly finishedAfterMs = new Map<Category, number>();

  count(fuzz: FuzzRequest, status: number | 'timeout' | 'error'): void {
    this.total++;
    this.byCategory.set(fuzz.category, (this.byCategory.get(fuzz.category) ?? 0) + 1);
    if (status === 'timeout') this.timeouts++;
    else if (status === 'error') this.transportErrors++;
    else {
      this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
      if (status >= 500) this.serverErrors++;
      if (status < 300)
        this.successesByCategory.set(fuzz.category, (this.successesByCategory.get(fuzz.category) ?? 0) + 1);
    }
  }

  report(elapsedMs: number): string {
    const dialect = process.env.TEST_DATABASE ?? 'sqlite';
    const lines = [
      `fuzz (${dialect}): seed ${seed} (replay with FUZZ_SEED=${seed}), ${(elapsedMs / 1000).toFixed(1)} s`,
      `  total requests: ${this.total}; 5xx: ${this.serverErrors}; timeouts: ${this.timeouts}; transport errors: ${this.transportErrors}`,
      '  per category (of which 2xx), time from the start until it finished:',
      ...[...this.byCategory].map(
        ([category, n]) =>
          `    ${category.padEnd(16)} ${String(n).padStart(6)} (${this.successesByCategory.get(category) ?? 0})` +
          `, done after ${((this.finishedAfterMs.get(category) ?? 0) / 1000).toFixed(1)} s`,
      ),
      '  per status:',
      ...[...this.byStatus].sort(([a], [b]) => a - b).map(([status, n]) => `    ${status} ${String(n).padStart(6)}`),
    ];
    return `${lines.join('\n')}\n`;
  }
}

/** Sends exactly these bytes and headers (fetch would refuse or fix up some of them), with a deadline. */
function exchange(baseUrl: URL, fuzz: FuzzRequest, agent: Agent): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: baseUrl.hostname,
        port: baseUrl.port,
        method: fuzz.method,
        // Not through new URL(): it would resolve '..' and re-encode what the case wants sent as it is.
        path: baseUrl.pathname.replace(/\/$/, '') + fuzz.path,
        headers: fuzz.headers,
        agent,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // The service may answer (413) and close before the whole body is written: wait for that answer.
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') setTimeout(() => reject(error), 1_000).unref();
      else reject(error);
    });
    outgoing.end(fuzz.body);
  });
}

/** Why this answer breaks the contract for this request, or null when it does not. */
function violation(fuzz: FuzzRequest, answer: Exchange): string | null {
  const { status, headers, text } = answer;
  if (status >= 500) return `a ${status}: ${text.slice(0, 300)}`;
  if (status === 429) return 'a 429, though the test app has no practical rate limit';
  if (status < 300 && !fuzz.valid) return `a ${status} for an invalid request`;
  if (!fuzz.expected.includes(status))
    return `${status}, expected ${fuzz.expected.join(' or ')}: ${text.slice(0, 300)}`;
  if (status === 304) return text === '' && headers.etag !== undefined ? null : 'a 304 with a body or without an ETag';
  if (status === 405 && headers.allow === undefined) return 'a 405 without an Allow header';
  if (status < 300 && fuzz.successBodyViolation !== undefined) return fuzz.successBodyViolation(JSON.parse(text));
  if (status < 400) return null;
  // The checks of expectProblem (use-test-app.ts), on a raw response.
  if (headers['content-type'] !== PROBLEM_CONTENT_TYPE)
    return `a ${status} with Content-Type ${headers['content-type']}`;
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `a ${status} whose body is not JSON: ${text.slice(0, 300)}`;
  }
  const type = problem.type;
  if (typeof type !== 'string' || !(type.startsWith('urn:problem-type:posts-api:') || type === 'about:blank')) {
    return `a problem with type ${String(type)}`;
  }
  if (problem.status !== status) return `a ${status} whose problem says status ${String(problem.status)}`;
  if (typeof problem.title !== 'string') return 'a problem without a title';
  if (typeof problem.detail !== 'string' || problem.detail.length === 0) return 'a problem without a detail';
  if (typeof problem.instance !== 'string' || !problem.instance.startsWith('/'))
    return 'a problem without an instance path';
  if (problem.requestId !== headers['x-request-id']) return 'a problem whose requestId is not the X-Request-Id';
  const expectedProblem = fuzz.problems?.[status];
  if (expectedProblem === undefined) return null;
  if (type !== `urn:problem-type:posts-api:${expectedProblem.type}`) return `a ${status} of type ${type}`;
  const [member, value] = Object.entries(expectedProblem.error)[0];
  const errors = Array.isArray(problem.errors) ? (problem.errors as Array<Record<string, unknown>>) : [];
  if (!errors.some((error) => error[member] === value))
    return `a ${status} whose errors do not name ${value}: ${text.slice(0, 300)}`;
  return null;
}

/** Where a setup post is after the run, and how many revisions it has kept. */
interface SetupPost {
  where: 'posts' | 'trash' | 'gone';
  revisions: number;
}

/** The cursor of a listing's next page, from its Link header. */
function nextCursor(response: HttpResult): string {
  const cursor = /[?&]cursor=([^&>]+)/.exec(response.headers.get('link') ?? '')?.[1];
  expect(cursor, `a next link on ${response.text}`).toBeDefined();
  return decodeURIComponent(cursor!);
}

/** With `{id}` in its path and header values replaced by this id. */
function aimedAt(fuzz: FuzzRequest, id: number): FuzzRequest {
  const fill = (text: string): string => text.replaceAll('{id}', String(id));
  return {
    ...fuzz,
    path: fill(fuzz.path),
    headers: Object.fromEntries(Object.entries(fuzz.headers).map(([name, value]) => [name, fill(value)])),
  };
}

// Reads the posts, post_revisions and posts_trash tables and needs them to start empty: not run
// against a deployment.
describe('fuzzing the posts API with malformed requests', { tags: ['database'] }, () => {
  const context = useTestApp();
  const { api } = context;
  const agent = new Agent({ keepAlive: true });
  afterAll(() => agent.destroy());

  const query = async <T>(sql: string, ids: number[]): Promise<T[]> =>
    context.app.dataSource.query<T[]>(sql.replace('(?)', `(${ids.map(() => '?').join(', ')})`), ids);

  /** The rows of these posts, in the posts table or in the trash, and of their revisions: what no malformed write may change. */
  const fixtureRows = async (liveIds: number[], trashedIds: number[]) => ({
    posts: await query(
      'SELECT id, title, content, author, version, owner_id, status, published_at, updated_at FROM posts WHERE id IN (?) ORDER BY id',
      liveIds,
    ),
    trash: await query(
      'SELECT id, title, version, owner_id, status, published_at, updated_at, deleted_at FROM posts_trash WHERE id IN (?) ORDER BY id',
      trashedIds,
    ),
    revisions: await query(
      'SELECT post_id, version, title, status, published_at, revised_at FROM post_revisions WHERE post_id IN (?) ORDER BY post_id, version',
      [...liveIds, ...trashedIds],
    ),
  });

  const ids = async (table: string): Promise<number[]> =>
    (await context.app.dataSource.query<Array<{ id: number | string }>>(`SELECT id FROM ${table}`))
      .map((row) => Number(row.id))
      .sort((a, b) => a - b);

  /** How many revisions each post has, by post id. */
  const revisionCounts = async (): Promise<Record<number, number>> => {
    const rows = await context.app.dataSource.query<Array<{ post_id: number | string; n: number | string }>>(
      'SELECT post_id, COUNT(*) AS n FROM post_revisions GROUP BY post_id',
    );
    return Object.fromEntries(rows.map((row) => [Number(row.post_id), Number(row.n)]));
  };

  /**
   * Posts that malformed writes aim at: the writer's, another principal's, and deleted ones; drafts
   * and scheduled posts; posts with revisions; and what the listings' cursors need.
   */
  const createFixtures = async (): Promise<FuzzTargets> => {
    // Before every fixture: the scheduled ones are due SCHEDULED_IN_MS after it, generated instants an hour away.
    const clock = Date.now();
    const create = async (as = api, post: object = buildPost()): Promise<number> => {
      const response = await as.post<{ id: number }>('/posts', post);
      expect(response.status).toBe(201);
      return response.body.id;
    };
    const remove = async (as: typeof api, id: number): Promise<void> => {
      expect((await as.delete(`/posts/${id}`)).status).toBe(204);
    };
    const otherWriterToken = await context.app.createToken([Scope.postsRead, Scope.postsWrite], {
      name: 'other-writer',
    });
    const other = api.as(otherWriterToken);
    const ownPostIds = [
      await create(),
      await create(api, buildPost({ title: 'Ünïcödé 😀 \u200f', content: 'line\n\ttab', author: 'Zoë' })),
      await create(api, buildPost({ content: 'x'.repeat(1_000) })),
    ];
    const otherPostIds = [await create(other), await create(other)];
    const deletedPostId = await create();
    await remove(api, deletedPostId);
    const firstPage = await api.get('/posts?limit=1');

    const scheduled = { status: 'scheduled', publishedAt: new Date(clock + SCHEDULED_IN_MS).toISOString() };
    const ownDraftId = await create(api, { ...buildPost(), status: 'draft' });
    const ownScheduledId = await create(api, { ...buildPost(), ...scheduled });
    const hiddenPostIds = [
      await create(other, { ...buildPost(), status: 'draft' }),
      await create(other, { ...buildPost(), ...scheduled }),
    ];
    // Titled like setup posts, so that an oracle knows the title of every revision.
    const revisedPost = async (as: typeof api, revisions: number): Promise<RevisedPost> => {
      const { create: body, patches } = setupRequests(
        { state: 'published', patches: revisions, trashed: false },
        clock,
      );
      const id = await create(as, body);
      for (const patch of patches) expect((await as.patch(`/posts/${id}`, patch)).status).toBe(200);
      return { id, revisions, cursor: nextCursor(await as.get(`/posts/${id}/revisions?limit=1`)) };
    };
    const revised = { own: await revisedPost(api, 3), other: await revisedPost(other, 2) };
    const ownTrashedPostIds = [deletedPostId, await create()];
    await remove(api, ownTrashedPostIds[1]);
    const otherTrashedPostIds = [await create(other)];
    await remove(other, otherTrashedPostIds[0]);

    await context.app.app.get(EventSequencer).settle();
    const [{ head }] = await context.app.dataSource.query<Array<{ head: number | string }>>(
      'SELECT MAX(position) AS head FROM events',
    );
    return {
      adminToken: context.app.adminToken,
      writerToken: context.app.writerToken,
      readerToken: await context.app.createToken([Scope.postsRead], { name: 'reader' }),
      ownPostIds,
      otherPostIds,
      deletedPostId,
      cursor: nextCursor(firstPage),
      feedHead: Number(head),
      clock,
      otherWriterToken,
      ownDraftId,
      ownScheduledId,
      hiddenPostIds,
      revised,
      ownTrashedPostIds,
      otherTrashedPostIds,
      trashCursor: nextCursor(await api.get('/trash?limit=1')),
    };
  };

  const apiKeyCount = async (): Promise<number> => {
    const [row] = await context.app.dataSource.query<Array<{ n: number | string }>>(
      'SELECT COUNT(*) AS n FROM api_keys',
    );
    return Number(row.n);
  };

  it('answers every malformed request with a 4xx problem, never a 5xx or a hang, and stores only what valid requests created', async () => {
    const started = Date.now();
    const targets = await createFixtures();
    const liveFixtureIds = [
      ...targets.ownPostIds,
      ...targets.otherPostIds,
      targets.ownDraftId,
      targets.ownScheduledId,
      ...targets.hiddenPostIds,
      targets.revised.own.id,
      targets.revised.other.id,
    ].sort((a, b) => a - b);
    const trashedFixtureIds = [...targets.ownTrashedPostIds, ...targets.otherTrashedPostIds].sort((a, b) => a - b);
    const fixturesBefore = await fixtureRows(liveFixtureIds, trashedFixtureIds);
    const revisionsBefore = await revisionCounts();
    const apiKeysBefore = await apiKeyCount();
    let createdApiKeys = 0;
    const baseUrl = new URL(context.app.baseUrl);
    const tally = new Tally();
    const createdIds = new Set<number>();
    const setupPosts = new Map<number, SetupPost>();
    const arbitraries: Record<Category, fc.Arbitrary<FuzzRequest>> = {
      ...fuzzArbitraries(targets),
      ...editorialArbitraries(targets),
    };
    process.stdout.write(`fuzz: seed ${seed} (replay with FUZZ_SEED=${seed})\n`);

    // Setup posts are made through PostsService as the writer, not over HTTP: they are arrangement,
    // not what is under test, and would otherwise be a fifth of the run's requests.
    const posts = context.app.app.get(PostsService);
    const [{ owner_id: writerId }] = await context.app.dataSource.query<Array<{ owner_id: string }>>(
      'SELECT owner_id FROM posts WHERE id = ?',
      [targets.ownPostIds[0]],
    );
    const writer: Principal = {
      id: writerId,
      kind: 'api-key',
      scopes: effectiveScopes([Scope.postsRead, Scope.postsWrite]),
    };
    /** Makes the setup post a request names and returns its id. */
    const makeSetupPost = async (setup: PostSetup): Promise<number> => {
      const { create, patches } = setupRequests(setup, targets.clock);
      const id = Number((await posts.create(create, writer)).id);
      for (const patch of patches) await posts.patch(id, patch, writer, { kind: 'none' });
      if (setup.trashed) await posts.remove(id, writer, { kind: 'none' });
      setupPosts.set(id, { where: setup.trashed ? 'trash' : 'posts', revisions: setup.patches });
      return id;
    };

    const property = (category: Category) =>
      fc.asyncProperty(arbitraries[category], async (generated) => {
        const setupId = generated.setup === undefined ? undefined : await makeSetupPost(generated.setup);
        const fuzz = setupId === undefined ? generated : aimedAt(generated, setupId);
        let answer: Exchange;
        try {
          answer = await exchange(baseUrl, fuzz, agent);
        } catch (error) {
          const timedOut = (error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError';
          tally.count(fuzz, timedOut ? 'timeout' : 'error');
          throw new Error(
            `${timedOut ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : `transport error ${String(error)}`} to ${describeRequest(fuzz)}`,
            { cause: error },
          );
        }
        tally.count(fuzz, answer.status);
        if (answer.status === 201 && fuzz.path === '/posts')
          createdIds.add((JSON.parse(answer.text) as { id: number }).id);
        if (answer.status === 201 && fuzz.path === '/api-keys') createdApiKeys++;
        const setupPost = setupId === undefined ? undefined : setupPosts.get(setupId)!;
        if (setupPost !== undefined && answer.status < 300) {
          if (fuzz.successEffect === 'keeps-revision') setupPost.revisions++;
          else if (fuzz.successEffect === 'leaves-trash') setupPost.where = 'posts';
          else if (fuzz.successEffect === 'erases') Object.assign(setupPost, { where: 'gone', revisions: 0 });
        }
        const broken = violation(fuzz, answer);
        if (broken !== null) throw new Error(`${broken}\n  request: ${describeRequest(fuzz)}`);
      });

    // The categories run side by side (a request in flight per category); each is one fc.assert
    // with the run's seed, so a failure names its category and can be replayed.
    const categories = Object.keys(RUNS) as Category[];
    const outcomes = await Promise.allSettled(
      categories.map((category) =>
        fc
          .assert(property(category), {
            seed,
            numRuns: RUNS[category],
            // Stops shrinking a failure after a while (and fails: the interruption is reported).
            interruptAfterTimeLimit: 120_000,
            markInterruptAsFailure: true,
            includeErrorInReport: true,
          })
          .finally(() => tally.finishedAfterMs.set(category, Date.now() - started)),
      ),
    );
    process.stdout.write(tally.report(Date.now() - started));

    const failures = outcomes
      .map((outcome, index) =>
        outcome.status === 'rejected' ? `[${categories[index]}] ${(outcome.reason as Error).message}` : null,
      )
      .filter((failure) => failure !== null);
    if (failures.length > 0) expect.fail(`FUZZ_SEED=${seed}\n${failures.join('\n\n')}`);
    expect(tally.total).toBeGreaterThanOrEqual(MINIMUM_REQUESTS);
    expect({
      serverErrors: tally.serverErrors,
      timeouts: tally.timeouts,
      transportErrors: tally.transportErrors,
    }).toEqual({
      serverErrors: 0,
      timeouts: 0,
      transportErrors: 0,
    });

    // The database holds the fixtures, what the valid creates made and the setup posts, each where
    // the answers put it (posts, trash, or erased), with the revisions the successful writes kept,
    // nothing else; and the fixtures, their revisions and the trashed ones are exactly as they were
    // after every malformed write aimed at them.
    const setupIds = (where: SetupPost['where']): number[] =>
      [...setupPosts].filter(([, post]) => post.where === where).map(([id]) => id);
    const ascending = (list: number[]): number[] => [...list].sort((a, b) => a - b);
    expect(await ids('posts')).toEqual(ascending([...liveFixtureIds, ...createdIds, ...setupIds('posts')]));
    expect(await ids('posts_trash')).toEqual(ascending([...trashedFixtureIds, ...setupIds('trash')]));
    expect(await revisionCounts()).toEqual({
      ...revisionsBefore,
      ...Object.fromEntries(
        [...setupPosts].filter(([, post]) => post.revisions > 0).map(([id, post]) => [id, post.revisions]),
      ),
    });
    expect(await fixtureRows(liveFixtureIds, trashedFixtureIds)).toEqual(fixturesBefore);
    // An expiry that is refused creates no key.
    expect(await apiKeyCount()).toBe(apiKeysBefore + createdApiKeys);
  }, 240_000);
});
