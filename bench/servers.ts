import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startServer, type ChildServer } from './processes.js';

// dist/bench/servers.js -> the repository root, where dist/src/main.js is.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVICE_MAIN = join(ROOT, 'dist', 'src', 'main.js');
const BASELINES = {
  sqlite: fileURLToPath(new URL('./baselines/sqlite-server.js', import.meta.url)),
  mysql: fileURLToPath(new URL('./baselines/mysql-server.js', import.meta.url)),
};
const NEST_FLOOR = fileURLToPath(new URL('./baselines/nest-floor.js', import.meta.url));

/** What the service is started with; the same on every start of a run. */
export interface ServiceSecrets {
  /** A generated admin API key (psk_…), given as BOOTSTRAP_API_KEY. */
  apiKey: string;
  /** Signs the pagination cursors; the benchmark builds the deep-page cursor with it. */
  cursorSecret: string;
}

// Only what the processes need: a variable of the caller's shell (API_PREFIX, REDIS_URL, LOG_LEVEL …)
// must not change what is measured.
function baseEnvironment(): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR, TZ } = process.env;
  return { PATH, HOME, TMPDIR, TZ, NODE_ENV: 'production' };
}

/** A start of the service under `node --cpu-prof` (--profile). */
export interface CpuProfiling {
  /** --cpu-prof-dir */
  directory: string;
  /** --cpu-prof-name, e.g. `service-sqlite-get.cpuprofile`. */
  fileName: string;
}

/**
 * The production build (`node dist/src/main.js`) with the whole pipeline on: API-key authentication
 * with a real key, the throttler (with a limit the benchmark cannot reach), validation, request logs
 * at the default level (written to a file) and metrics. Migrations run on start. With `cpuProfile`,
 * under `node --cpu-prof`: the profile is written when the service exits (SIGTERM: it exits 0).
 */
export async function startService(
  databaseUrl: string,
  secrets: ServiceSecrets,
  workDir: string,
  label: string,
  cpuProfile?: CpuProfiling,
  extraEnv: Record<string, string> = {},
): Promise<ChildServer> {
  const port = await freePort();
  return startServer({
    name: `service (${label})`,
    script: SERVICE_MAIN,
    nodeOptions:
      cpuProfile === undefined
        ? undefined
        : ['--cpu-prof', `--cpu-prof-dir=${cpuProfile.directory}`, `--cpu-prof-name=${cpuProfile.fileName}`],
    cwd: ROOT,
    port,
    readyPath: '/health/live',
    logPath: join(workDir, `service-${label}.log`),
    env: {
      ...baseEnvironment(),
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      BOOTSTRAP_API_KEY: secrets.apiKey,
      CURSOR_SECRET: secrets.cursorSecret,
      THROTTLE_LIMIT: '999999999',
      THROTTLE_TTL: '60',
      ...extraEnv,
    },
  });
}

/** B0 (MySQL) or B0s (SQLite): the raw node:http baseline, also a process of its own. */
export async function startBaseline(
  kind: 'sqlite' | 'mysql',
  databaseUrl: string,
  ownerId: string,
  workDir: string,
): Promise<ChildServer> {
  const port = await freePort();
  return startServer({
    name: kind === 'mysql' ? 'baseline B0' : 'baseline B0s',
    script: BASELINES[kind],
    cwd: ROOT,
    port,
    readyPath: '/health',
    logPath: join(workDir, `baseline-${kind}.log`),
    env: storeServerEnvironment(port, databaseUrl, ownerId),
  });
}

/**
 * F (--floor): the smallest NestJS application answering GET /posts/:id and POST /posts with the
 * baselines' store. It serves nothing else, so it is ready once the post `readyPostId` answers 200.
 */
export async function startFloor(
  kind: 'sqlite' | 'mysql',
  databaseUrl: string,
  ownerId: string,
  workDir: string,
  readyPostId: number,
): Promise<ChildServer> {
  const port = await freePort();
  return startServer({
    name: 'framework floor F',
    script: NEST_FLOOR,
    cwd: ROOT,
    port,
    readyPath: `/posts/${readyPostId}`,
    logPath: join(workDir, `floor-${kind}.log`),
    env: storeServerEnvironment(port, databaseUrl, ownerId),
  });
}

/** The environment of a server built on the baselines' store (B0, B0s, F). */
function storeServerEnvironment(port: number, databaseUrl: string, ownerId: string): NodeJS.ProcessEnv {
  return {
    ...baseEnvironment(),
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    POST_OWNER_ID: ownerId,
    // The service's default pool size.
    DATABASE_POOL_SIZE: '10',
  };
}
