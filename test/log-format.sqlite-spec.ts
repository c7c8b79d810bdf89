import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters as stripColours } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../src/auth/api-keys/api-key-token.js';
import { freePort } from './helpers/free-port.js';

// SQLite only: runs the compiled service (built once by the project's global setup) as its own
// process, because what is tested is what it writes to a pipe and to a terminal. The terminal is a
// pseudo-terminal from util-linux's script(1).
const MAIN = resolve('dist/src/main.js');

describe('log output', { timeout: 60_000 }, () => {
  const directory = mkdtempSync(join(tmpdir(), 'posts-log-format-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  /**
   * Starts the service with stdout on a pipe, or on a terminal; sends one authenticated GET /posts
   * once it listens; stops it with SIGTERM and returns everything it wrote.
   */
  async function runService(stdout: 'pipe' | 'terminal'): Promise<string> {
    const port = await freePort();
    const token = generateApiKeyToken();
    const env = {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(directory, `${stdout}.sqlite`)}`,
      BOOTSTRAP_API_KEY: token,
      LOG_LEVEL: 'log',
    };
    const child =
      stdout === 'pipe'
        ? spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(
            'script',
            ['--quiet', '--flush', '--return', '--command', `"${process.execPath}" "${MAIN}"`, '/dev/null'],
            {
              env,
              stdio: ['ignore', 'pipe', 'pipe'],
            },
          );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    try {
      for (let waited = 0; !output.includes('Listening on'); waited += 50) {
        if (waited > 30_000 || child.exitCode !== null) throw new Error(`the service did not start:\n${output}`);
        await new Promise((done) => setTimeout(done, 50));
      }
      const response = await fetch(`http://127.0.0.1:${port}/posts`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      await response.text();
      // The request line is written when the response finishes; give the pipe a moment.
      for (let waited = 0; !stripColours(output).includes('GET /posts 200') && waited < 5_000; waited += 50) {
        await new Promise((done) => setTimeout(done, 50));
      }
    } finally {
      // script(1) passes SIGTERM on to the service in its terminal.
      child.kill('SIGTERM');
      await exited;
    }
    return output;
  }

  it('writes one JSON object per line when stdout is not a terminal', async () => {
    const output = await runService('pipe');

    const lines = output.split('\n').filter((line) => line !== '');
    const records = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(records.every((record) => typeof record.level === 'number')).toBe(true);
    expect(records.some((record) => record.msg.startsWith('Listening on'))).toBe(true);
    expect(records.find((record) => record.msg === 'GET /posts 200')).toMatchObject({ route: '/posts' });
  });

  it('pretty-prints coloured, human-readable lines when stdout is a terminal', async () => {
    const output = await runService('terminal');

    const plain = stripColours(output);
    expect(plain).not.toBe(output);
    expect(plain).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO \(\d+\): Listening on /m);
    expect(plain).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO \(\d+\): GET \/posts 200\r?$/m);
    expect(plain).not.toMatch(/^\{"level"/m);
  });
});
