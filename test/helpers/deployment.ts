import type { ScopeName } from '../../src/auth/principal.js';
import { Scope } from '../../src/auth/principal.js';
import { send } from './http.js';
import type { TestApp } from './test-app.js';

/**
 * Set by `npm run test:e2e -- --base-url URL`: the e2e suite then runs against that deployment over
 * HTTP instead of starting the service itself. E2E_TOKEN is an admin API key of the deployment.
 */
export const deploymentUrl: string | undefined = process.env.E2E_BASE_URL?.replace(/\/+$/, '') || undefined;

/** Thrown when a test reaches for something only a locally started service has. */
export class NeedsLocalServiceError extends Error {
  constructor(what: string, tag: 'database' | 'instance') {
    super(
      `${what} is not available against a deployment (--base-url): ` +
        `tag the test or its describe block { tags: ['${tag}'] } so the remote run leaves it out`,
    );
  }
}

/** Keys the remote run creates expire on their own even if the run dies before revoking them. */
const KEY_LIFETIME_MS = 2 * 60 * 60 * 1000;

interface CreatedKey {
  id: number;
  token: string;
}

/**
 * The deployment at E2E_BASE_URL as a TestApp: the same tokens and base URL, with API keys created
 * and revoked over its /api-keys endpoints. The database and the Nest application are out of reach.
 */
export async function connectToDeployment(baseUrl: string): Promise<TestApp> {
  const adminToken = process.env.E2E_TOKEN;
  if (!adminToken) {
    throw new Error('E2E_TOKEN must hold an admin API key of the deployment at --base-url');
  }
  const created: number[] = [];
  const createToken = async (
    scopes: ScopeName[],
    options: { name?: string; expiresAt?: Date } = {},
  ): Promise<string> => {
    const expiresAt = options.expiresAt ?? new Date(Date.now() + KEY_LIFETIME_MS);
    const response = await send<CreatedKey>(
      'POST',
      `${baseUrl}/api-keys`,
      { name: `e2e ${options.name ?? scopes.join('+')}`, scopes, expiresAt: expiresAt.toISOString() },
      { authorization: `Bearer ${adminToken}` },
    );
    if (response.status !== 201) {
      throw new Error(`POST ${baseUrl}/api-keys answered ${response.status}: ${response.text}`);
    }
    created.push(response.body.id);
    return response.body.token;
  };
  const writerToken = await createToken([Scope.postsRead, Scope.postsWrite], { name: 'writer' });
  const unavailable = (what: string, tag: 'database' | 'instance') => () => {
    throw new NeedsLocalServiceError(what, tag);
  };
  const deployment = {
    baseUrl,
    adminToken,
    writerToken,
    createToken,
    close: async () => {
      for (const id of created.splice(0)) {
        await send('DELETE', `${baseUrl}/api-keys/${id}`, undefined, { authorization: `Bearer ${adminToken}` });
      }
    },
  };
  return Object.defineProperties(deployment, {
    app: { get: unavailable('The Nest application', 'instance') },
    dataSource: { get: unavailable('Direct database access', 'database') },
    databaseUrl: { get: unavailable('The database URL', 'database') },
  }) as TestApp;
}

/** The number of posts the deployment holds, through the API (X-Total-Count). */
export async function countPostsOverHttp(testApp: TestApp): Promise<number> {
  const response = await send('GET', `${testApp.baseUrl}/posts?limit=1&count=true`, undefined, {
    authorization: `Bearer ${testApp.adminToken}`,
  });
  const total = response.headers.get('x-total-count');
  if (response.status !== 200 || total === null) {
    throw new Error(`GET /posts?count=true answered ${response.status} without X-Total-Count: ${response.text}`);
  }
  return Number(total);
}

/** The post as GET /posts/:id shows it to the admin key; undefined when it does not exist. */
export async function findPostOverHttp(testApp: TestApp, id: number): Promise<Record<string, unknown> | undefined> {
  const response = await send<Record<string, unknown>>('GET', `${testApp.baseUrl}/posts/${id}`, undefined, {
    authorization: `Bearer ${testApp.adminToken}`,
  });
  if (response.status === 404) return undefined;
  if (response.status !== 200) throw new Error(`GET /posts/${id} answered ${response.status}: ${response.text}`);
  return response.body;
}
