// @module-tag instance
// Starts four copies of the compiled service as processes of their own, at the same moment, on one
// empty database: what is tested is how separate processes share a database while they start.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { freePort } from './helpers/free-port.js';
import { createTestDatabase, dialect } from './helpers/test-database.js';

const INSTANCES = 4;
const FIRST_RUN_KEY = /psk_[A-Za-z0-9_-]{49}/g;

interface Instance {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** The compiled service (built by the projects' global setup) as a process, configured as a fresh install. */
function startInstance(databaseUrl: string, port: number): Instance {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl };
  for (const name of ['BOOTSTRAP_API_KEY', 'OAUTH_ISSUER', 'OAUTH_AUDIENCE', 'OAUTH_JWKS_URL', 'API_PREFIX']) {
    delete env[name];
  }
  const child = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, port, output: () => output, exited };
}

/** The first-run keys an instance printed (the banner shows its key twice). */
function printedKeys(instance: Instance): string[] {
  return [...new Set(instance.output().match(FIRST_RUN_KEY))];
}

/** Polls /health/ready until it answers 200; the last status seen otherwise ('exited' if the process died). */
async function readiness(instance: Instance, timeoutMs: number): Promise<number | 'exited'> {
  let exited = false;
  void instance.exited.then(() => (exited = true));
  let status = 0;
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !exited;) {
    status = await fetch(`http://127.0.0.1:${instance.port}/health/ready`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return exited ? 'exited' : status;
}

/** An empty database all four share, and a way to read it that is not one of the instances. */
async function sharedDatabase(): Promise<{
  url: string;
  rows<T>(sql: string): Promise<T[]>;
  tablesQuery: string;
  drop(): Promise<void>;
}> {
  if (dialect === 'mysql') {
    const database = await createTestDatabase();
    const connection = await createConnection({ uri: database.url });
    return {
      url: database.url,
      rows: async <T>(sql: string) => (await connection.query(sql))[0] as T[],
      tablesQuery: 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()',
      drop: async () => {
        await connection.end();
        await database.drop();
      },
    };
  }
  // A file, not :memory:: the point is four processes on one database.
  const directory = mkdtempSync(join(tmpdir(), 'posts-fleet-'));
  const path = join(directory, 'posts.sqlite');
  return {
    url: `sqlite:${path}`,
    rows: <T>(sql: string) => {
      const database = new Database(path, { readonly: true });
      try {
        return Promise.resolve(database.prepare(sql).all() as T[]);
      } finally {
        database.close();
      }
    },
    tablesQuery: "SELECT name FROM sqlite_master WHERE type = 'table'",
    drop: () => Promise.resolve(rmSync(directory, { recursive: true, force: true })),
  };
}

describe(`four instances started at once on an empty ${dialect} database`, { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof sharedDatabase>>;
  const instances: Instance[] = [];
  const ready: Array<number | 'exited'> = [];

  beforeAll(async () => {
    database = await sharedDatabase();
    const ports: number[] = [];
    for (let index = 0; index < INSTANCES; index++) ports.push(await freePort());
    // Spawned in one go, so that their start-ups overlap as much as they can.
    instances.push(...ports.map((port) => startInstance(database.url, port)));
    ready.push(...(await Promise.all(instances.map((instance) => readiness(instance, 90_000)))));
    const keys = instances.map((instance) => printedKeys(instance).length);
    const retried = instances.filter((instance) => /Unable to connect/.test(instance.output())).length;
    process.stdout.write(
      `fleet start on ${dialect}: readiness ${JSON.stringify(ready)}, first-run keys printed per instance ` +
        `${JSON.stringify(keys)}, ${retried} instance(s) retried their database start-up\n`,
    );
  }, 120_000);

  afterAll(async () => {
    for (const instance of instances) instance.child.kill('SIGTERM');
    await Promise.all(instances.map((instance) => instance.exited));
    await database?.drop();
  });

  it('all become ready', () => {
    expect(ready).toEqual(Array.from({ length: INSTANCES }, () => 200));
  });

  it('ran no migration twice: no instance saw one fail and had to start its database again', () => {
    const failures = instances.flatMap((instance) =>
      instance
        .output()
        .split('\n')
        .filter((line) => /Migration "\w+" failed|Unable to connect/.test(line)),
    );

    expect(failures).toEqual([]);
  });

  it('applied each migration exactly once', async () => {
    const applied = await database.rows<{ name: string }>('SELECT name FROM migrations ORDER BY id');
    const tables = await database.rows<{ name: string }>(database.tablesQuery);

    expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    expect(tables.map((table) => table.name)).toEqual(
      expect.arrayContaining(['api_keys', 'idempotency_keys', 'migrations', 'posts']),
    );
  });

  it('created one first-run key, printed by one instance only, that every instance accepts', async () => {
    const keys = await database.rows('SELECT name, scopes FROM api_keys');
    const printers = instances.filter((instance) => printedKeys(instance).length > 0);
    const printed = instances.flatMap(printedKeys);

    expect(keys).toEqual([{ name: 'initial-admin', scopes: 'admin' }]);
    expect(printers).toHaveLength(1);
    expect(printed).toHaveLength(1);
    for (const instance of instances) {
      const response = await fetch(`http://127.0.0.1:${instance.port}/posts`, {
        headers: { authorization: `Bearer ${printed[0]}` },
      });
      expect(response.status).toBe(200);
    }
  });
});
