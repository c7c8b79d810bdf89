// @module-tag instance
// (starts instances configured with a JWKS server of its own)
import { randomBytes, webcrypto } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportJWK, exportSPKI, SignJWT, type CryptoKey, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiKeyResource } from '../src/auth/api-keys/api-key.resource.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { client, type HttpResult } from './helpers/http.js';
import { createSigningKey, JwksServer, type SigningKey } from './helpers/jwks-server.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { expectProblem } from './helpers/use-test-app.js';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'posts-api';
const READ_WRITE = 'posts:read posts:write';

const BARE_CHALLENGE = 'Bearer realm="posts"';
const INVALID_TOKEN = 'Bearer realm="posts", error="invalid_token"';
const INVALID_REQUEST = 'Bearer realm="posts", error="invalid_request"';
const insufficientScope = (scope: string) => `Bearer realm="posts", error="insufficient_scope", scope="${scope}"`;

// The verifier's settings (src/auth/oauth/jwt-access-token.verifier.ts): refetch cooldown, fetch timeout,
// key-set lifetime, the first fail-fast window after a failed fetch, and how old a cached key set may
// get while the issuer is down.
const JWKS_COOLDOWN_MS = 30_000;
const JWKS_TIMEOUT_MS = 3_000;
const JWKS_CACHE_MAX_AGE_MS = 10 * 60_000;
const JWKS_FIRST_OPEN_MS = 2_000;
const STALE_KEY_SET_LIMIT_MS = 24 * 60 * 60_000;
// Answers that do not wait for the issuer: far below the fetch timeout, with room for a loaded machine.
const FAIL_FAST_MS = 500;

interface Keys {
  /** Published in every JWKS of this file. */
  rsa: SigningKey;
  ec: SigningKey;
  /** Never published: they reuse the kids of the published keys, as a forger would. */
  forgedRsa: SigningKey;
  forgedEc: SigningKey;
}

let keys: Keys;

beforeAll(async () => {
  keys = {
    rsa: await createSigningKey('RS256', 'rsa-1'),
    ec: await createSigningKey('ES256', 'ec-1'),
    forgedRsa: await createSigningKey('RS256', 'rsa-1'),
    forgedEc: await createSigningKey('ES256', 'ec-1'),
  };
});

// Seconds since the epoch, from `new Date()`: the JWKS cache tests move Date.now (which jose's key-set
// cache reads) but not `new Date()` (which jose's exp/nbf checks read).
const nowSeconds = () => Math.floor(new Date().getTime() / 1000);

type Overrides = Record<string, unknown>;

/** Drops the members whose value is undefined, so an override of `undefined` removes a claim or header. */
const defined = (record: Overrides): Overrides =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));

function claimsOf(overrides: Overrides = {}): JWTPayload {
  const now = nowSeconds();
  return defined({
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'alice',
    scope: READ_WRITE,
    iat: now,
    exp: now + 300,
    ...overrides,
  });
}

interface TokenOptions {
  key?: SigningKey;
  claims?: Overrides;
  header?: Overrides;
}

/** An RFC 9068 access token of the test issuer, signed with `key` (the published RSA key by default). */
async function accessToken({ key = keys.rsa, claims, header = {} }: TokenOptions = {}): Promise<string> {
  const protectedHeader = defined({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header });
  return new SignJWT(claimsOf(claims)).setProtectedHeader(protectedHeader as JWTHeaderParameters).sign(key.privateKey);
}

const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const segmentsOf = (token: string): string[] => token.split('.');
const header = (overrides: Overrides = {}) => ({ alg: 'RS256', kid: keys.rsa.kid, typ: 'at+jwt', ...overrides });

/** A compact JWS signed with Web Crypto directly, for what SignJWT refuses to produce. */
async function signRaw(
  protectedHeader: object,
  payloadSegment: string,
  privateKey: CryptoKey,
  algorithm: Parameters<typeof webcrypto.subtle.sign>[0],
): Promise<string> {
  const signingInput = `${segment(protectedHeader)}.${payloadSegment}`;
  const signature = await webcrypto.subtle.sign(algorithm, privateKey, Buffer.from(signingInput));
  return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
}

/** HS256 with the kid of the published RSA key: the key-confusion attack when `secret` is that public key. */
function signHs256(secret: Uint8Array): Promise<string> {
  return new SignJWT(claimsOf()).setProtectedHeader({ alg: 'HS256', kid: keys.rsa.kid, typ: 'at+jwt' }).sign(secret);
}

/** Changes one character in the middle of a base64url segment (where every bit is significant). */
function flipCharacter(value: string): string {
  const index = Math.floor(value.length / 2);
  return value.slice(0, index) + (value[index] === 'A' ? 'B' : 'A') + value.slice(index + 1);
}

function expectInvalidToken(response: HttpResult): void {
  expectProblem(response, 401, 'invalid-token');
  expect(response.headers.get('www-authenticate')).toBe(INVALID_TOKEN);
}

function expectInvalidRequest(response: HttpResult): void {
  expectProblem(response, 400, 'invalid-request');
  expect(response.headers.get('www-authenticate')).toBe(INVALID_REQUEST);
}

function oauthEnv(jwks: JwksServer, extra: Record<string, string> = {}): Record<string, string> {
  return { OAUTH_ISSUER: ISSUER, OAUTH_AUDIENCE: AUDIENCE, OAUTH_JWKS_URL: jwks.url, ...extra };
}

/** An app trusting `jwks`, with a client authenticated by the app's writer API key. */
function useOAuthApp(publishedKeys: () => SigningKey[], extraEnv: Record<string, string> = {}) {
  const jwks = new JwksServer();
  let testApp: TestApp | undefined;
  beforeAll(async () => {
    for (const key of publishedKeys()) jwks.publish(key);
    await jwks.start();
    testApp = await startTestApp({ env: oauthEnv(jwks, extraEnv) });
  });
  afterAll(async () => {
    await testApp?.close();
    await jwks.stop();
  });
  const app = (): TestApp => {
    if (!testApp) throw new Error('the test app is not started');
    return testApp;
  };
  return {
    jwks,
    app,
    writer: client(
      () => app().baseUrl,
      () => app().writerToken,
    ),
  };
}

describe('OAuth 2.0 JWT access tokens', () => {
  const { app, writer } = useOAuthApp(() => [keys.rsa, keys.ec]);
  const as = (token: string | null) => writer.as(token);
  // What a side effect would change: the newest posts and the total count.
  const snapshotPosts = async () => {
    const response = await writer.get('/posts?count=true');
    expect(response.status).toBe(200);
    return { total: response.headers.get('x-total-count'), newest: response.body };
  };
  const asSubject = async (sub: string, scope = READ_WRITE) => as(await accessToken({ claims: { sub, scope } }));

  const createPostAs = async (api: ReturnType<typeof as>) => {
    const response = await api.post<PostResource>('/posts', buildPost());
    expect(response.status).toBe(201);
    return response.body;
  };

  describe('valid tokens', () => {
    it.each(['rsa', 'ec'] as const)(
      'lets a %s-signed token with posts:read posts:write list and create posts',
      async (kind) => {
        const api = as(await accessToken({ key: keys[kind] }));
        const input = buildPost();

        const listed = await api.get<PostResource[]>('/posts');
        const created = await api.post<PostResource>('/posts', input);

        expect(listed.status).toBe(200);
        expect(Array.isArray(listed.body)).toBe(true);
        expect(created.status).toBe(201);
        expect(created.body).toMatchObject(input);
        expect(created.headers.get('location')).toBe(`/posts/${created.body.id}`);
        expect((await writer.get(`/posts/${created.body.id}`)).body).toEqual(created.body);
      },
    );

    it('lets a token with events:read read the feed, and only the feed', async () => {
      const api = as(await accessToken({ claims: { scope: 'events:read' } }));
      const feed = await api.get('/events?limit=1');
      expect(feed.status).toBe(200);
      expect(feed.headers.get('link')).toContain('rel="next"');
      expectProblem(await api.get('/posts'), 403, 'insufficient-scope');
      expectProblem(await as(await accessToken()).get('/events'), 403, 'insufficient-scope');
    });

    it('accepts scopes given as an scp array for reading', async () => {
      const created = await createPostAs(writer);
      const api = as(await accessToken({ claims: { scope: undefined, scp: ['posts:read'] } }));

      const response = await api.get<PostResource>(`/posts/${created.id}`);

      expect(response.status).toBe(200);
      expect(response.body).toEqual(created);
    });

    it.each<[string, () => TokenOptions]>([
      ['exp 30 s ago, within the 60 s leeway', () => ({ claims: { exp: nowSeconds() - 30 } })],
      ['nbf 30 s in the future, within the 60 s leeway', () => ({ claims: { nbf: nowSeconds() + 30 } })],
      ['typ application/at+jwt', () => ({ header: { typ: 'application/at+jwt' } })],
      ['typ AT+JWT (media types are case-insensitive)', () => ({ header: { typ: 'AT+JWT' } })],
      ['an aud array that contains ours', () => ({ claims: { aud: ['https://other.test/', AUDIENCE] } })],
      ['a sub of exactly 255 characters', () => ({ claims: { sub: 'ü'.repeat(255) } })],
    ])('accepts a token with %s and lets it create a post it owns', async (_, options) => {
      const api = as(await accessToken(options()));

      const created = await api.post<PostResource>('/posts', buildPost());
      const patched = await api.patch<PostResource>(`/posts/${created.body.id}`, { title: 'Changed by its owner' });

      expect(created.status).toBe(201);
      expect(patched.status).toBe(200);
      expect(patched.body.title).toBe('Changed by its owner');
    });

    it('accepts the scheme name in any case: "bearer <token>"', async () => {
      const token = await accessToken();

      const response = await writer.get('/posts', { authorization: `bearer ${token}` });

      expect(response.status).toBe(200);
    });
  });

  describe('scopes', () => {
    it('refuses POST to a reader-only token with 403 insufficient_scope and creates nothing', async () => {
      const reader = await asSubject('reader', 'posts:read');
      const before = await snapshotPosts();

      const response = await reader.post('/posts', buildPost());

      expectProblem(response, 403, 'insufficient-scope');
      expect(response.headers.get('www-authenticate')).toBe(insufficientScope('posts:write'));
      expect(await snapshotPosts()).toEqual(before);
    });

    it('refuses writes to an scp-array reader token', async () => {
      const reader = as(await accessToken({ claims: { scope: undefined, scp: ['posts:read'] } }));
      const created = await createPostAs(writer);

      const response = await reader.patch(`/posts/${created.id}`, { title: 'Not allowed' });

      expectProblem(response, 403, 'insufficient-scope');
      expect(response.headers.get('www-authenticate')).toBe(insufficientScope('posts:write'));
      expect((await writer.get(`/posts/${created.id}`)).body).toEqual(created);
    });

    it('refuses reading to a token without any posts scope', async () => {
      const stranger = await asSubject('stranger', 'openid profile');

      const response = await stranger.get('/posts');

      expectProblem(response, 403, 'insufficient-scope');
      expect(response.headers.get('www-authenticate')).toBe(insufficientScope('posts:read'));
    });

    it('refuses key management to a posts:write token', async () => {
      const response = await (await asSubject('alice')).get('/api-keys');

      expectProblem(response, 403, 'insufficient-scope');
      expect(response.headers.get('www-authenticate')).toBe(insufficientScope('admin'));
    });

    it('lets an admin token list and create posts and manage API keys', async () => {
      const admin = await asSubject('root', 'admin');

      const listed = await admin.get('/posts');
      const created = await admin.post<PostResource>('/posts', buildPost());
      const apiKeys = await admin.get<ApiKeyResource[]>('/api-keys');

      expect(listed.status).toBe(200);
      expect(created.status).toBe(201);
      expect(apiKeys.status).toBe(200);
      expect(apiKeys.body.map((key) => key.name)).toContain('writer');
    });
  });

  describe('ownership across principals', () => {
    const writes = [
      ['PATCH', (api: ReturnType<typeof as>, id: number) => api.patch(`/posts/${id}`, { title: 'Hijacked' })],
      ['PUT', (api: ReturnType<typeof as>, id: number) => api.put(`/posts/${id}`, buildPost({ title: 'Hijacked' }))],
      ['DELETE', (api: ReturnType<typeof as>, id: number) => api.delete(`/posts/${id}`)],
    ] as const;

    it.each(writes)(
      'refuses %s by another JWT subject with posts:write and leaves the post unchanged',
      async (_, write) => {
        const alice = await asSubject('alice');
        const bob = await asSubject('bob');
        const created = await createPostAs(alice);

        const response = await write(bob, created.id);

        expectProblem(response, 403, 'forbidden');
        expect((await alice.get(`/posts/${created.id}`)).body).toEqual(created);
      },
    );

    it.each(writes)('lets the owning JWT subject %s its post', async (method, write) => {
      const alice = await asSubject('alice');
      const created = await createPostAs(alice);

      const response = await write(alice, created.id);

      expect(response.status).toBe(method === 'DELETE' ? 204 : 200);
    });

    it.each(writes)('lets an admin token %s a post of a JWT subject', async (method, write) => {
      const created = await createPostAs(await asSubject('alice'));

      const response = await write(await asSubject('root', 'admin'), created.id);

      expect(response.status).toBe(method === 'DELETE' ? 204 : 200);
    });

    it.each(writes)('refuses %s by a JWT writer of a post created by an API key', async (_, write) => {
      const created = await createPostAs(writer);

      const response = await write(await asSubject('alice'), created.id);

      expectProblem(response, 403, 'forbidden');
      expect((await writer.get(`/posts/${created.id}`)).body).toEqual(created);
    });

    it.each(writes)('refuses %s by the API writer key of a post created by a JWT subject', async (_, write) => {
      const created = await createPostAs(await asSubject('alice'));

      const response = await write(writer, created.id);

      expectProblem(response, 403, 'forbidden');
      expect((await writer.get(`/posts/${created.id}`)).body).toEqual(created);
    });

    // Padded subjects are not identifiers at all: their tokens are refused outright (401).
    it.each([
      ['differs only in case', 'ALICE', 403, 'forbidden'],
      ['has a trailing space', 'alice ', 401, 'invalid-token'],
      ['has a leading space', ' alice', 401, 'invalid-token'],
      ['is a prefix', 'alic', 403, 'forbidden'],
    ] as const)('refuses a subject that %s', async (_, impostor, status, type) => {
      const created = await createPostAs(await asSubject('alice'));

      const response = await (await asSubject(impostor)).patch(`/posts/${created.id}`, { title: 'Hijacked' });

      expectProblem(response, status, type);
      expect((await writer.get(`/posts/${created.id}`)).body).toEqual(created);
    });

    it('does not let a JWT whose sub imitates an API key principal change that key’s posts', async () => {
      const created = await createPostAs(writer);
      const apiKeys = await as(app().adminToken).get<ApiKeyResource[]>('/api-keys');
      const writerKey = apiKeys.body.find((key) => key.name === 'writer')!;

      const impostor = await asSubject(`api-key:${writerKey.id}`);

      const response = await impostor.patch(`/posts/${created.id}`, { title: 'Hijacked' });

      expectProblem(response, 403, 'forbidden');
      expect((await writer.get(`/posts/${created.id}`)).body).toEqual(created);
    });
  });

  describe('refused tokens', () => {
    const badTokens: Array<{ name: string; token: () => string | Promise<string> }> = [
      {
        name: 'an unsecured JWT (alg none)',
        token: () => `${segment({ alg: 'none', typ: 'at+jwt' })}.${segment(claimsOf())}.`,
      },
      {
        name: 'HS256 signed with the RSA public key PEM as the HMAC secret',
        token: async () => signHs256(Buffer.from(await exportSPKI(keys.rsa.publicKey))),
      },
      {
        name: 'HS256 signed with the RSA public JWK bytes as the HMAC secret',
        token: () => signHs256(Buffer.from(JSON.stringify(keys.rsa.jwk))),
      },
      { name: 'HS256 signed with a random secret', token: () => signHs256(randomBytes(32)) },
      { name: 'a wrong iss', token: () => accessToken({ claims: { iss: 'https://evil.test/' } }) },
      {
        name: 'the iss without its trailing slash',
        token: () => accessToken({ claims: { iss: 'https://issuer.test' } }),
      },
      { name: 'the iss in upper case', token: () => accessToken({ claims: { iss: 'HTTPS://ISSUER.TEST/' } }) },
      { name: 'no iss', token: () => accessToken({ claims: { iss: undefined } }) },
      { name: 'a wrong aud', token: () => accessToken({ claims: { aud: 'other-api' } }) },
      { name: 'an aud that only starts with ours', token: () => accessToken({ claims: { aud: 'posts-api-staging' } }) },
      { name: 'an aud array without ours', token: () => accessToken({ claims: { aud: ['a-api', 'b-api'] } }) },
      { name: 'no aud', token: () => accessToken({ claims: { aud: undefined } }) },
      {
        name: 'exp 2 minutes ago (beyond the 60 s leeway)',
        token: () => accessToken({ claims: { iat: nowSeconds() - 600, exp: nowSeconds() - 120 } }),
      },
      { name: 'nbf 2 minutes in the future', token: () => accessToken({ claims: { nbf: nowSeconds() + 120 } }) },
      { name: 'no exp', token: () => accessToken({ claims: { exp: undefined } }) },
      { name: 'an exp that is a string', token: () => accessToken({ claims: { exp: String(nowSeconds() + 300) } }) },
      { name: 'no sub', token: () => accessToken({ claims: { sub: undefined } }) },
      { name: 'an empty sub', token: () => accessToken({ claims: { sub: '' } }) },
      { name: 'a numeric sub', token: () => accessToken({ claims: { sub: 42 } }) },
      { name: 'a blank sub', token: () => accessToken({ claims: { sub: ' ' } }) },
      { name: 'a sub with a control character', token: () => accessToken({ claims: { sub: 'ali\nce' } }) },
      { name: 'a sub of 256 characters', token: () => accessToken({ claims: { sub: 'a'.repeat(256) } }) },
      { name: 'typ JWT (refused by default)', token: () => accessToken({ header: { typ: 'JWT' } }) },
      { name: 'no typ', token: () => accessToken({ header: { typ: undefined } }) },
      { name: 'typ dpop+jwt', token: () => accessToken({ header: { typ: 'dpop+jwt' } }) },
      { name: 'an unknown kid', token: () => accessToken({ header: { kid: 'no-such-kid' } }) },
      {
        name: 'the kid of the RSA key, signed by the EC key',
        token: () => accessToken({ key: keys.ec, header: { kid: keys.rsa.kid } }),
      },
      {
        name: 'a payload tampered with after signing (scope raised to admin)',
        token: async () => {
          const claims = claimsOf({ scope: 'posts:read' });
          const [head, , signature] = segmentsOf(await accessToken({ claims }));
          return `${head}.${segment({ ...claims, scope: 'admin' })}.${signature}`;
        },
      },
      {
        name: 'a tampered signature',
        token: async () => {
          const [head, payload, signature] = segmentsOf(await accessToken());
          return `${head}.${payload}.${flipCharacter(signature)}`;
        },
      },
      {
        name: 'a truncated token (two segments)',
        token: async () =>
          segmentsOf(await accessToken())
            .slice(0, 2)
            .join('.'),
      },
      {
        name: 'a JWE-looking token (five segments)',
        token: () =>
          [
            segment({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: keys.rsa.kid, typ: 'at+jwt' }),
            ...Array.from({ length: 4 }, () => randomBytes(32).toString('base64url')),
          ].join('.'),
      },
      { name: 'garbage in three segments (a.b.c)', token: () => 'a.b.c' },
      { name: 'empty segments (..)', token: () => '..' },
      {
        name: 'a token signed by an unpublished RSA key with the kid of a published one',
        token: () => accessToken({ key: keys.forgedRsa }),
      },
      {
        name: 'a token signed by an unpublished EC key with the kid of a published one',
        token: () => accessToken({ key: keys.forgedEc }),
      },
      {
        name: 'an RS256 token whose alg header was switched to RS512',
        token: async () => {
          const [, payload, signature] = segmentsOf(await accessToken());
          return `${segment(header({ alg: 'RS512' }))}.${payload}.${signature}`;
        },
      },
      {
        name: 'the EC key used with alg PS256',
        token: () =>
          signRaw(header({ alg: 'PS256', kid: keys.ec.kid }), segment(claimsOf()), keys.ec.privateKey, {
            name: 'ECDSA',
            hash: 'SHA-256',
          }),
      },
      {
        name: 'a self-signed token carrying its own key in a jwk header',
        token: async () =>
          new SignJWT(claimsOf())
            .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', jwk: await exportJWK(keys.forgedEc.publicKey) })
            .sign(keys.forgedEc.privateKey),
      },
      {
        name: 'an unknown crit header extension',
        token: () =>
          signRaw(
            header({ crit: ['urn:example:ext'], 'urn:example:ext': true }),
            segment(claimsOf()),
            keys.rsa.privateKey,
            'RSASSA-PKCS1-v1_5',
          ),
      },
      {
        name: 'a correctly signed payload that is not a JSON object',
        token: () => signRaw(header(), segment(['not', 'an', 'object']), keys.rsa.privateKey, 'RSASSA-PKCS1-v1_5'),
      },
      {
        name: 'a very long token (10 kB)',
        token: () =>
          `${segment(header())}.${randomBytes(7_500).toString('base64url')}.${randomBytes(256).toString('base64url')}`,
      },
    ];

    // Tuples and %s, not $name: vitest shortens interpolated object members to 40 characters.
    const badTokenTable = badTokens.map(({ name, token }) => [name, token] as const);

    it.each(badTokenTable)('refuses %s with 401 invalid_token and creates nothing', async (_, token) => {
      const api = as(await token());
      const before = await snapshotPosts();

      const created = await api.post('/posts', buildPost());
      const listed = await api.get('/posts');

      expectInvalidToken(created);
      expectInvalidToken(listed);
      expect(await snapshotPosts()).toEqual(before);
    });

    it('never fetches keys from the URL in a jku header', async () => {
      const attacker = new JwksServer([keys.forgedRsa]);
      await attacker.start();
      try {
        const token = await accessToken({ key: keys.forgedRsa, header: { kid: 'attacker-1', jku: attacker.url } });

        const response = await as(token).get('/posts');

        expectInvalidToken(response);
        expect(attacker.requests).toBe(0);
      } finally {
        await attacker.stop();
      }
    });
  });

  describe('how the token is sent', () => {
    it('refuses a valid token in the query string with 400 invalid_request', async () => {
      const token = await accessToken();

      const response = await as(null).get(`/posts?access_token=${token}`);

      expectInvalidRequest(response);
    });

    it('refuses a valid token in the query string even with a valid Authorization header', async () => {
      const token = await accessToken();

      const response = await as(token).get(`/posts?access_token=${token}`);

      expectInvalidRequest(response);
    });

    it.each([
      ['without', false],
      ['with', true],
    ])('refuses a form body with access_token %s the header, and creates nothing', async (_, withHeader) => {
      const token = await accessToken();
      const before = await snapshotPosts();

      const response = await as(withHeader ? token : null).post(
        '/posts',
        new URLSearchParams({ ...buildPost(), access_token: token }).toString(),
        { 'content-type': 'application/x-www-form-urlencoded' },
      );

      expectInvalidRequest(response);
      expect(await snapshotPosts()).toEqual(before);
    });

    it('refuses a JSON POST body containing access_token, even with a valid header, and creates nothing', async () => {
      const token = await accessToken();
      const before = await snapshotPosts();

      const response = await as(token).post('/posts', { ...buildPost(), access_token: token });

      expectInvalidRequest(response);
      expect(await snapshotPosts()).toEqual(before);
    });

    it('refuses a merge patch containing access_token, even with a valid header, and changes nothing', async () => {
      const token = await accessToken();
      const created = await createPostAs(as(token));

      const response = await as(token).patch(
        `/posts/${created.id}`,
        JSON.stringify({ title: 'Changed', access_token: token }),
        { 'content-type': 'application/merge-patch+json' },
      );

      expectInvalidRequest(response);
      expect((await writer.get(`/posts/${created.id}`)).body).toEqual(created);
    });

    it.each([
      ['"Bearer" with nothing after it', 'Bearer'],
      ['"Bearer a b"', 'Bearer a b'],
    ])('refuses %s with 400 invalid_request', async (_, authorization) => {
      const response = await writer.get('/posts', { authorization });

      expectInvalidRequest(response);
    });

    it('answers Basic credentials with 401 and a bare Bearer challenge', async () => {
      const response = await writer.get('/posts', { authorization: 'Basic dXNlcjpwYXNz' });

      expectProblem(response, 401, 'unauthorized');
      expect(response.headers.get('www-authenticate')).toBe(BARE_CHALLENGE);
    });
  });

  describe('tokens never leak', () => {
    const failures: Array<[string, TokenOptions, (token: string) => Promise<HttpResult>]> = [
      ['refused as expired', { claims: { exp: nowSeconds() - 3600 } }, (token) => as(token).get('/posts')],
      ['refused for its iss', { claims: { iss: 'https://evil.test/' } }, (token) => as(token).get('/posts')],
      ['refused for its typ', { header: { typ: 'JWT' } }, (token) => as(token).post('/posts', buildPost())],
      ['sent in the query string', {}, (token) => as(null).get(`/posts?access_token=${token}`)],
      [
        'sent in a form body',
        {},
        (token) =>
          as(null).post('/posts', `access_token=${token}`, { 'content-type': 'application/x-www-form-urlencoded' }),
      ],
      ['sent in a JSON body', {}, (token) => as(token).post('/posts', { ...buildPost(), access_token: token })],
      ['sent after "Bearer x "', {}, (token) => writer.get('/posts', { authorization: `Bearer x ${token}` })],
    ];

    it.each(failures)('keeps a token %s out of the response', async (_, options, send) => {
      const token = await accessToken(options);
      const signature = segmentsOf(token)[2];

      const response = await send(token);

      expect(response.status).toBeGreaterThanOrEqual(400);
      const headers = [...response.headers.entries()].map(([name, value]) => `${name}: ${value}`);
      for (const text of [response.text, ...headers]) {
        expect(text).not.toContain(signature);
      }
    });
  });
});

describe('the JWKS cache', () => {
  const { jwks, writer } = useOAuthApp(() => [keys.rsa, keys.ec]);
  let clockOffsetMs = 0;

  // jose's key-set cache reads Date.now; moving it forward lets a test get past the 30 s refetch
  // cooldown without waiting. Token lifetimes are checked against `new Date()`, which is left alone.
  const realNow = Date.now;
  const moveJwksClockPastCooldown = () => {
    clockOffsetMs += JWKS_COOLDOWN_MS + 1_000;
    const offset = clockOffsetMs;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
  };

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('fetches the key set once for many concurrent and sequential requests with RSA and EC tokens', async () => {
    const tokens = [await accessToken({ key: keys.rsa }), await accessToken({ key: keys.ec })];
    expect(jwks.requests).toBe(0);

    const concurrent = await Promise.all(
      Array.from({ length: 20 }, (_, index) => writer.as(tokens[index % 2]).get('/posts')),
    );
    const sequential: HttpResult[] = [];
    for (let index = 0; index < 10; index++) sequential.push(await writer.as(tokens[index % 2]).get('/posts'));

    expect([...concurrent, ...sequential].map((response) => response.status)).toEqual(Array(30).fill(200));
    expect(jwks.requests).toBe(1);
  });

  it('does not see a key published within the cooldown, and does not refetch for it', async () => {
    await writer.as(await accessToken()).get('/posts');
    const rotated = await createSigningKey('RS256', 'rsa-within-cooldown');
    jwks.publish(rotated);
    const fetchesBefore = jwks.requests;

    const response = await writer.as(await accessToken({ key: rotated })).get('/posts');

    expectInvalidToken(response);
    expect(jwks.requests).toBe(fetchesBefore);
  });

  it('refetches for an unknown kid once the cooldown has passed and accepts the rotated key', async () => {
    const rotated = await createSigningKey('RS256', 'rsa-rotated');
    jwks.publish(rotated);
    const fetchesBefore = jwks.requests;
    moveJwksClockPastCooldown();

    const withNewKey = await writer.as(await accessToken({ key: rotated })).get('/posts');
    const withOldKeys = [
      await writer.as(await accessToken({ key: keys.rsa })).get('/posts'),
      await writer.as(await accessToken({ key: keys.ec })).get('/posts'),
    ];

    expect(withNewKey.status).toBe(200);
    expect(withOldKeys.map((response) => response.status)).toEqual([200, 200]);
    expect(jwks.requests).toBe(fetchesBefore + 1);
  });

  it('does not refetch for a second unknown kid within the cooldown after a refetch', async () => {
    const rotated = await createSigningKey('ES256', 'ec-rotated');
    jwks.publish(rotated);
    moveJwksClockPastCooldown();
    expect((await writer.as(await accessToken({ key: rotated })).get('/posts')).status).toBe(200);
    const fetchesAfterRefetch = jwks.requests;

    const responses: HttpResult[] = [];
    for (const kid of ['unknown-1', 'unknown-2', 'unknown-3']) {
      responses.push(await writer.as(await accessToken({ header: { kid } })).get('/posts'));
    }

    responses.forEach(expectInvalidToken);
    expect(jwks.requests).toBe(fetchesAfterRefetch);
  });
});

describe('OAUTH_ACCEPT_JWT_TYP=true', () => {
  const { writer } = useOAuthApp(() => [keys.rsa, keys.ec], { OAUTH_ACCEPT_JWT_TYP: 'true' });

  it.each([
    ['typ JWT', { typ: 'JWT' }],
    ['no typ', { typ: undefined }],
    ['typ at+jwt', { typ: 'at+jwt' }],
  ])('accepts a token with %s', async (_, header) => {
    const response = await writer.as(await accessToken({ key: keys.ec, header })).get('/posts');

    expect(response.status).toBe(200);
  });

  it('still refuses other types, such as dpop+jwt', async () => {
    const response = await writer.as(await accessToken({ header: { typ: 'dpop+jwt' } })).get('/posts');

    expectInvalidToken(response);
  });
});

describe('when the JWKS cannot be fetched', () => {
  const jwks = new JwksServer();
  let testApp: TestApp | undefined;
  const app = (): TestApp => {
    if (!testApp) throw new Error('the test app is not started');
    return testApp;
  };
  const writer = client(
    () => app().baseUrl,
    () => app().writerToken,
  );

  beforeAll(async () => {
    jwks.publish(keys.rsa);
    // Only to reserve a port for OAUTH_JWKS_URL: each test starts the server when it wants it up.
    await jwks.start();
    await jwks.stop();
  });

  // An instance per test: the verifier remembers failed fetches, so every test starts from an empty
  // key set and a closed circuit.
  beforeEach(async () => {
    testApp = await startTestApp({ env: oauthEnv(jwks) });
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await testApp?.close();
    testApp = undefined;
    await jwks.stop();
    jwks.delayMs = 0;
    jwks.status = 200;
  });

  const expectUnavailable = (response: HttpResult) => {
    expectProblem(response, 503, 'service-unavailable');
    expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(response.headers.get('www-authenticate')).toBeNull();
  };

  // Far longer than the fetch timeout: the issuer accepts the connection and never answers in time.
  const hangIssuer = async () => {
    await jwks.start();
    jwks.delayMs = JWKS_TIMEOUT_MS + 5_000;
  };

  // jose's key-set cache and the stale-key limit read Date.now; token lifetimes read `new Date()`.
  const ageKeySetBy = (ms: number) => {
    const realNow = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
  };

  /** GET /posts with `token`, and how long the answer took. */
  const timedGet = async (token: string) => {
    const started = performance.now();
    const response = await writer.as(token).get('/posts');
    return { response, elapsedMs: performance.now() - started };
  };

  const timedGets = async (token: string, count: number) => {
    const answers: Array<Awaited<ReturnType<typeof timedGet>>> = [];
    for (let index = 0; index < count; index++) answers.push(await timedGet(token));
    return answers;
  };

  const slowest = (answers: Array<{ elapsedMs: number }>) => Math.max(...answers.map(({ elapsedMs }) => elapsedMs));

  it('answers 503 with Retry-After, not 401, when the JWKS server is down before any fetch, and API keys keep working', async () => {
    await jwks.stop();
    const token = await accessToken();

    const withJwt = await writer.as(token).get('/posts');
    const withApiKey = await writer.get('/posts');

    expectUnavailable(withJwt);
    expect(withApiKey.status).toBe(200);
  });

  it('answers 503 when the JWKS server does not answer within the fetch timeout', async () => {
    await jwks.start();
    jwks.delayMs = JWKS_TIMEOUT_MS + 5_000;
    const fetchesBefore = jwks.requests;
    const started = performance.now();

    const response = await writer.as(await accessToken()).get('/posts');

    const elapsed = performance.now() - started;
    expectUnavailable(response);
    expect(jwks.requests).toBe(fetchesBefore + 1);
    expect(elapsed).toBeGreaterThanOrEqual(JWKS_TIMEOUT_MS - 500);
    expect(elapsed).toBeLessThan(JWKS_TIMEOUT_MS + 4_000);
  });

  it('answers 503 when the JWKS endpoint answers with an error status', async () => {
    await jwks.start();
    jwks.status = 500;

    const response = await writer.as(await accessToken()).get('/posts');

    expectUnavailable(response);
  });

  it('answers the next requests at once with 503 and an honest Retry-After, without asking the hanging issuer again', async () => {
    await hangIssuer();
    const token = await accessToken();
    expectUnavailable(await writer.as(token).get('/posts'));
    const fetchesBefore = jwks.requests;

    const answers = await timedGets(token, 10);

    answers.forEach(({ response }) => expectUnavailable(response));
    const retryAfters = answers.map(({ response }) => Number(response.headers.get('retry-after')));
    expect(Math.max(...retryAfters)).toBeLessThanOrEqual(JWKS_FIRST_OPEN_MS / 1_000);
    expect(slowest(answers)).toBeLessThan(FAIL_FAST_MS);
    expect(jwks.requests).toBe(fetchesBefore);
  });

  it('keeps accepting a token whose key is cached while the issuer hangs, even after the cache has expired', async () => {
    await jwks.start();
    const token = await accessToken();
    expect((await writer.as(token).get('/posts')).status).toBe(200);
    jwks.delayMs = JWKS_TIMEOUT_MS + 5_000;
    ageKeySetBy(JWKS_CACHE_MAX_AGE_MS + 60_000);
    const fetchesBefore = jwks.requests;

    // The first request still waits for the refetch of the expired set, then falls back on it.
    const first = await writer.as(token).get('/posts');
    const next = await timedGets(token, 5);

    expect(first.status).toBe(200);
    expect(next.map(({ response }) => response.status)).toEqual(Array(5).fill(200));
    expect(slowest(next)).toBeLessThan(FAIL_FAST_MS);
    expect(jwks.requests).toBe(fetchesBefore + 1);
  });

  it('stops trusting a cached key set older than a day while the issuer hangs, and fails fast', async () => {
    await jwks.start();
    const token = await accessToken();
    expect((await writer.as(token).get('/posts')).status).toBe(200);
    jwks.delayMs = JWKS_TIMEOUT_MS + 5_000;
    ageKeySetBy(STALE_KEY_SET_LIMIT_MS + 60_000);

    const first = await writer.as(token).get('/posts');
    const next = await timedGet(token);

    expectUnavailable(first);
    expectUnavailable(next.response);
    expect(next.elapsedMs).toBeLessThan(FAIL_FAST_MS);
  });

  it('fails fast while the issuer hangs, and accepts tokens within seconds of its return after a single probe fetch', async () => {
    await hangIssuer();
    const token = await accessToken();
    expectUnavailable(await writer.as(token).get('/posts'));
    const whileDown = await timedGet(token);
    jwks.delayMs = 0;
    const fetchesBefore = jwks.requests;
    const back = performance.now();

    const beforeRecovery: HttpResult[] = [];
    let response = await writer.as(token).get('/posts');
    while (response.status !== 200 && performance.now() - back < 10_000) {
      beforeRecovery.push(response);
      await sleep(100);
      response = await writer.as(token).get('/posts');
    }
    const recoveredAfterMs = performance.now() - back;

    expectUnavailable(whileDown.response);
    expect(whileDown.elapsedMs).toBeLessThan(FAIL_FAST_MS);
    beforeRecovery.forEach(expectUnavailable);
    expect(response.status).toBe(200);
    expect(recoveredAfterMs).toBeLessThan(JWKS_FIRST_OPEN_MS + 1_500);
    expect(jwks.requests).toBe(fetchesBefore + 1);
  });

  it('accepts tokens again once the JWKS can be fetched, on the retry Retry-After asks for, without a restart', async () => {
    const token = await accessToken();
    const duringOutage = await writer.as(token).get('/posts');
    expectUnavailable(duringOutage);
    await jwks.start();
    await sleep(Number(duringOutage.headers.get('retry-after')) * 1_000);

    const response = await writer.as(token).get('/posts');

    expect(response.status).toBe(200);
  });
});
