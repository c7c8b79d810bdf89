// @module-tag instance
// (reads the log lines of the instance it starts)
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Scope } from '../src/auth/principal.js';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

describe('tokens never leak', () => {
  let testApp: TestApp;
  const output: string[] = [];

  beforeAll(async () => {
    // Everything the service writes, at the most verbose level, is captured and searched.
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        output.push(String(chunk));
        return true;
      });
    }
    testApp = await startTestApp({
      logLevels: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
      logLines: output,
    });
  });

  afterAll(async () => {
    await testApp?.close();
    vi.restoreAllMocks();
  });

  it('keeps every token out of responses and logs, on success, refusal and server error', async () => {
    const valid = await testApp.createToken([Scope.postsRead]);
    const revokedLater = await testApp.createToken([Scope.postsRead, Scope.postsWrite]);
    const unknown = 'psk_unknownunknownunknownunknownunknownunknown-000000';
    const operatorStyle = 'operator-chosen-secret-that-is-not-in-the-database';
    const jwtShaped = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2lnbmF0dXJlLXNlZ21lbnQtc2VjcmV0';
    const tokens = [valid, revokedLater, unknown, operatorStyle, jwtShaped, testApp.adminToken, testApp.writerToken];
    const api = client(() => testApp.baseUrl);
    const responses: string[] = [];
    const record = async (request: Promise<{ text: string; headers: Headers }>) => {
      const response = await request;
      responses.push(response.text, JSON.stringify([...response.headers]));
    };

    for (const token of tokens) {
      await record(api.as(token).get('/posts'));
      await record(api.as(token).post('/posts', buildPost()));
      await record(api.as(null).get(`/posts?access_token=${token}`));
      await record(api.as(token).post('/posts', { ...buildPost(), access_token: token }));
      await record(
        api.as(null).post('/posts', `access_token=${token}`, { 'content-type': 'application/x-www-form-urlencoded' }),
      );
    }
    // A server error while the token is being checked (the key table is gone) must not echo it either.
    await testApp.dataSource.query('DROP TABLE api_keys');
    await record(api.as(revokedLater).get('/posts'));
    await record(api.as(operatorStyle).get('/posts'));

    const everything = responses.join('\n') + output.join('');
    expect(output.join('')).toMatch(/Problem|Internal server error|query failed/);
    // The request log lines are in there too.
    expect(output.join('')).toContain('"route":"/posts"');
    for (const token of tokens) {
      expect(everything).not.toContain(token);
      // Not even the secret part of it.
      expect(everything).not.toContain(token.slice(8, 40));
    }
  });
});
