// @module-tag instance
// (starts the compiled service as a process of its own, with its own environment)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../src/auth/api-keys/api-key-token.js';
import { createConnection } from 'mysql2/promise';
import { freePort } from './helpers/free-port.js';
import { createTestDatabase, dialect } from './helpers/test-database.js';

// Runs the compiled service (built once by the projects' global setup) as its own process, because
// what is tested is how it refuses to start: its exit code, what it prints, and that it touched no
// database.
const MAIN = resolve('dist/src/main.js');

interface Run {
  exitCode: number | null;
  output: string;
  listening: boolean;
  stop(): Promise<void>;
}

interface EmptyDatabase {
  url: string;
  /** Whether the service created anything in it (a SQLite file, a MySQL table). */
  touched(): Promise<boolean>;
  drop(): Promise<void>;
}

async function emptyDatabase(directory: string, name: string): Promise<EmptyDatabase> {
  if (dialect === 'sqlite') {
    const path = join(directory, `${name}.sqlite`);
    return { url: `sqlite:${path}`, touched: () => Promise.resolve(existsSync(path)), drop: () => Promise.resolve() };
  }
  const database = await createTestDatabase();
  return {
    url: database.url,
    touched: async () => {
      const connection = await createConnection({ uri: database.url });
      try {
        const [rows] = await connection.query(
          'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE()',
        );
        return Number((rows as Array<{ n: number | string }>)[0].n) > 0;
      } finally {
        await connection.end();
      }
    },
    drop: () => database.drop(),
  };
}

describe('BOOTSTRAP_API_KEY values that could never authenticate', { timeout: 60_000 }, () => {
  const directory = mkdtempSync(join(tmpdir(), 'posts-bootstrap-'));
  const databases: EmptyDatabase[] = [];
  const newDatabase = async (name: string): Promise<EmptyDatabase> => {
    const database = await emptyDatabase(directory, name);
    databases.push(database);
    return database;
  };
  afterAll(async () => {
    await Promise.all(databases.map((database) => database.drop()));
    rmSync(directory, { recursive: true, force: true });
  });

  /** Starts the service with this bootstrap value; stops it if it gets as far as listening. */
  async function start(bootstrapApiKey: string, databaseUrl: string, port: number): Promise<Run> {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: databaseUrl,
        BOOTSTRAP_API_KEY: bootstrapApiKey,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    const outcome = await Promise.race([
      exited.then((exitCode) => ({ exitCode, listening: false })),
      (async () => {
        while (!output.includes('Listening on')) await new Promise((done) => setTimeout(done, 50));
        return { exitCode: null, listening: true };
      })(),
      new Promise<{ exitCode: null; listening: false }>((done) =>
        setTimeout(() => done({ exitCode: null, listening: false }), 30_000),
      ),
    ]);
    const stop = async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    };
    return { ...outcome, output, stop };
  }

  const generated = generateApiKeyToken();

  it.each([
    ['has the form of a JWT', `${'a'.repeat(15)}.${'b'.repeat(15)}.${'c'.repeat(15)}`, 'JWT'],
    [
      'starts with psk_ but has a wrong checksum',
      generated.slice(0, -1) + (generated.at(-1) === 'A' ? 'B' : 'A'),
      'psk_',
    ],
  ])(
    'refuses a value that %s: exit code 1, one line naming the variable, nothing created',
    async (_, value, mentions) => {
      const database = await newDatabase(mentions);

      const run = await start(value, database.url, await freePort());
      await run.stop();

      expect(run.listening).toBe(false);
      expect(run.exitCode).toBe(1);
      expect(run.output.trim().split('\n')).toEqual([
        expect.stringMatching(/^Invalid configuration: BOOTSTRAP_API_KEY .*/),
      ]);
      expect(run.output).toContain(mentions);
      expect(run.output).not.toContain(value);
      expect(await database.touched()).toBe(false);
    },
  );

  it('starts with a value of one dot, and that value authenticates as an admin key', async () => {
    const value = `${'a'.repeat(20)}.${'b'.repeat(20)}`;
    const port = await freePort();

    const run = await start(value, (await newDatabase('one-dot')).url, port);
    try {
      expect(run.listening).toBe(true);
      const response = await fetch(`http://127.0.0.1:${port}/api-keys`, {
        headers: { authorization: `Bearer ${value}` },
      });
      expect(response.status).toBe(200);
    } finally {
      await run.stop();
    }
  });
});
