import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A post as both baseline stores read it back. */
export interface StoredPost {
  id: number;
  title: string;
  content: string;
  author: string;
  version: number;
  status: string;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PostInput {
  title: string;
  content: string;
  author: string;
}

/** The database half of a baseline: the service's SQL, nothing around it. */
export interface PostStore {
  findById(id: number): Promise<StoredPost | undefined>;
  /** Inserts the post and returns its id. */
  insert(input: PostInput, ownerId: string, now: Date): Promise<number>;
  close(): Promise<void>;
}

export interface BaselineSettings {
  port: number;
  host: string;
  databaseUrl: string;
  /** owner_id of created posts, the principal the service would record (`api-key:<id>`). */
  ownerId: string;
  poolSize: number;
}

export function baselineSettings(env: NodeJS.ProcessEnv): BaselineSettings {
  const { PORT, HOST, DATABASE_URL, POST_OWNER_ID, DATABASE_POOL_SIZE } = env;
  if (PORT === undefined || DATABASE_URL === undefined || POST_OWNER_ID === undefined) {
    throw new Error('a baseline needs PORT, DATABASE_URL and POST_OWNER_ID');
  }
  return {
    port: Number(PORT),
    host: HOST ?? '127.0.0.1',
    databaseUrl: DATABASE_URL,
    ownerId: POST_OWNER_ID,
    poolSize: Number(DATABASE_POOL_SIZE ?? 10),
  };
}

const JSON_TYPE = 'application/json; charset=utf-8';
const BODY_LIMIT = 1024 * 1024;
const POST_PATH = /^\/posts\/([1-9]\d{0,15})$/;

/**
 * The least an HTTP server must do to answer like the service: GET /posts/:id and POST /posts with
 * the same JSON fields, Content-Type, ETag and Location. No authentication, rate limiting, logging,
 * metrics, security headers or full validation: the difference is what the benchmark measures.
 */
export function startBaselineServer(store: PostStore, settings: BaselineSettings): Promise<Server> {
  const server = createServer((request, response) => {
    handle(store, settings, request, response).catch((error: Error) => {
      process.stderr.write(`baseline: ${error.stack ?? error.message}\n`);
      if (!response.headersSent) send(response, 500, { title: 'Internal Server Error' });
      else response.destroy();
    });
  });
  const stop = (): void => {
    server.close(() => {
      void store.close().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return new Promise((resolve) => server.listen(settings.port, settings.host, () => resolve(server)));
}

async function handle(
  store: PostStore,
  settings: BaselineSettings,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = request.url ?? '/';
  if (request.method === 'GET' && path === '/health') return send(response, 200, { status: 'ok' });

  if (request.method === 'GET') {
    const match = POST_PATH.exec(path);
    if (!match || !Number.isSafeInteger(Number(match[1]))) return send(response, 404, { title: 'Not Found' });
    const post = await store.findById(Number(match[1]));
    // The benchmark reads published posts: the service's visibility check comes down to this.
    if (!post || post.status !== 'published') return send(response, 404, { title: 'Not Found' });
    return send(response, 200, representation(post), { ETag: postETag(post) });
  }

  if (request.method === 'POST' && path === '/posts') {
    const input = parseInput(await readBody(request));
    if (input === undefined) return send(response, 400, { title: 'Bad Request' });
    const now = new Date();
    const id = await store.insert(input, settings.ownerId, now);
    const post: StoredPost = { id, ...input, version: 1, ...PUBLISHED_NOW(now), createdAt: now, updatedAt: now };
    return send(response, 201, representation(post), { Location: `/posts/${id}`, ETag: postETag(post) });
  }

  return send(response, 404, { title: 'Not Found' });
}

/** What a create without a status stores: published now (contract §10). */
export const PUBLISHED_NOW = (now: Date): Pick<StoredPost, 'status' | 'publishedAt'> => ({
  status: 'published',
  publishedAt: now,
});

// The service's PostResource, fields in the same order.
export function representation(post: StoredPost): object {
  return {
    id: post.id,
    title: post.title,
    content: post.content,
    author: post.author,
    status: post.status,
    publishedAt: post.publishedAt === null ? null : post.publishedAt.toISOString(),
    createdAt: post.createdAt.toISOString(),
    updatedAt: post.updatedAt.toISOString(),
  };
}

export function postETag(post: StoredPost): string {
  return `"${post.id}.${post.version}"`;
}

function send(response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'Content-Type': JSON_TYPE,
    'Content-Length': Buffer.byteLength(json),
  });
  response.end(json);
}

/** The request body as UTF-8 text; undefined past 1 MiB. (F reads POST bodies with it too.) */
export async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > BODY_LIMIT) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** title, content and author as strings, all the validation the baselines (and F) do. */
export function parseInput(body: string | undefined): PostInput | undefined {
  if (body === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { title, content, author } = parsed as Record<string, unknown>;
  if (typeof title !== 'string' || typeof content !== 'string' || typeof author !== 'string') return undefined;
  return { title, content, author };
}
