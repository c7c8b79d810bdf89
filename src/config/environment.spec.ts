// Long file: a case for every variable and for each way of getting one wrong.
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { loadConfig } from './environment.js';

const VALID_SECRET = 'x'.repeat(32);

/** 32 characters, every one of which RFC 6750's b64token allows (A-Z a-z 0-9 - . _ ~ + /). */
const VALID_API_KEY = 'AZaz09-._~+/AZaz09-._~+/AZaz09-.';

const OAUTH = {
  OAUTH_ISSUER: 'https://login.example.com/',
  OAUTH_AUDIENCE: 'https://api.example.com/posts',
  OAUTH_JWKS_URL: 'https://login.example.com/.well-known/jwks.json',
};

const OAUTH_VARIABLES = Object.keys(OAUTH) as Array<keyof typeof OAUTH>;

/** The error loadConfig throws for `env`, or undefined when it returns. */
function errorFor(env: NodeJS.ProcessEnv): unknown {
  try {
    loadConfig(env);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('loadConfig', () => {
  describe('defaults', () => {
    it('uses the documented defaults for an empty environment', () => {
      const config = loadConfig({});

      expect(config).toEqual({
        port: 3000,
        host: '0.0.0.0',
        apiPrefix: '',
        database: { kind: 'sqlite', path: 'data/posts.sqlite', poolSize: 10 },
        bodyLimitBytes: 1_048_576,
        bodyTimeoutMs: 30_000,
        cursorSecret: null,
        publicBaseUrl: null,
        logLevel: 'log',
        rateLimit: { limit: 100, windowSeconds: 60, authFailureLimit: 20, redisUrl: null, redisKeyPrefix: 'posts:' },
        metricsToken: null,
        corsOrigins: [],
        shutdownTimeoutMs: 10_000,
        requireIfMatch: false,
        revisionsPerPost: 50,
        trashRetentionMs: 30 * 86_400_000,
        trustProxy: 0,
        events: { retentionMs: 30 * 86_400_000, heartbeatMs: 15_000 },
        webhooks: {
          deliver: true,
          secretKey: null,
          allowPrivateNetworks: false,
          retryScheduleMs: [
            5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000,
          ],
          timeoutMs: 10_000,
          leaseMs: 60_000,
        },
        auth: { bootstrapApiKey: null, oauth: null },
      });
    });

    it('treats empty strings as unset', () => {
      const config = loadConfig({
        PORT: '',
        HOST: '',
        API_PREFIX: '',
        DATABASE_URL: '',
        DATABASE_POOL_SIZE: '',
        BODY_LIMIT: '',
        BODY_TIMEOUT: '',
        CURSOR_SECRET: '',
        PUBLIC_BASE_URL: '',
        BOOTSTRAP_API_KEY: '',
        OAUTH_ISSUER: '',
        OAUTH_AUDIENCE: '',
        OAUTH_JWKS_URL: '',
        OAUTH_ACCEPT_JWT_TYP: '',
        LOG_LEVEL: '',
      });

      expect(config).toEqual(loadConfig({}));
    });

    it('ignores variables it does not read', () => {
      const config = loadConfig({ PATH: '/usr/bin', HOME: '/root', SOMETHING_ELSE: 'value' });

      expect(config).toEqual(loadConfig({}));
    });
  });

  describe('valid values', () => {
    it('reads every variable', () => {
      const config = loadConfig({
        PORT: '8080',
        HOST: '127.0.0.1',
        API_PREFIX: '/api/v1',
        DATABASE_URL: 'mysql://app:pw@db:3307/posts',
        DATABASE_POOL_SIZE: '25',
        BODY_LIMIT: '2mb',
        BODY_TIMEOUT: '5000',
        CURSOR_SECRET: VALID_SECRET,
        PUBLIC_BASE_URL: 'https://blog.example.com/base',
        BOOTSTRAP_API_KEY: VALID_API_KEY,
        ...OAUTH,
        OAUTH_ACCEPT_JWT_TYP: 'true',
        LOG_LEVEL: 'debug',
        THROTTLE_LIMIT: '500',
        THROTTLE_TTL: '30',
        THROTTLE_AUTH_FAILURE_LIMIT: '5',
        TRUST_PROXY: '2',
        REQUIRE_IF_MATCH: 'true',
        REVISIONS_PER_POST: '7',
        TRASH_RETENTION: '12h',
        EVENTS_RETENTION: '90m',
        EVENTS_HEARTBEAT: '250ms',
        EVENTS_DELIVERY: 'false',
        WEBHOOK_SECRET_KEY: 'w'.repeat(32),
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '100ms,1s,2m',
        WEBHOOK_TIMEOUT: '2s',
        WEBHOOK_LEASE: '5s',
        METRICS_TOKEN: 'metrics-token-0123456789',
        CORS_ORIGINS: 'https://app.example.com,http://localhost:5173',
        SHUTDOWN_TIMEOUT: '2500',
        REDIS_URL: 'redis://cache:6379/1',
        REDIS_KEY_PREFIX: 'blog:',
      });

      expect(config).toEqual({
        port: 8080,
        host: '127.0.0.1',
        apiPrefix: '/api/v1',
        database: {
          kind: 'mysql',
          host: 'db',
          port: 3307,
          username: 'app',
          password: 'pw',
          database: 'posts',
          poolSize: 25,
        },
        bodyLimitBytes: 2 * 1_048_576,
        bodyTimeoutMs: 5_000,
        cursorSecret: VALID_SECRET,
        publicBaseUrl: 'https://blog.example.com/base',
        logLevel: 'debug',
        rateLimit: {
          limit: 500,
          windowSeconds: 30,
          authFailureLimit: 5,
          redisUrl: 'redis://cache:6379/1',
          redisKeyPrefix: 'blog:',
        },
        metricsToken: 'metrics-token-0123456789',
        corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
        shutdownTimeoutMs: 2_500,
        requireIfMatch: true,
        revisionsPerPost: 7,
        trashRetentionMs: 12 * 3_600_000,
        trustProxy: 2,
        events: { retentionMs: 90 * 60_000, heartbeatMs: 250 },
        webhooks: {
          deliver: false,
          secretKey: 'w'.repeat(32),
          allowPrivateNetworks: true,
          retryScheduleMs: [100, 1_000, 120_000],
          timeoutMs: 2_000,
          leaseMs: 5_000,
        },
        auth: {
          bootstrapApiKey: VALID_API_KEY,
          oauth: {
            issuer: 'https://login.example.com/',
            audience: 'https://api.example.com/posts',
            jwksUrl: 'https://login.example.com/.well-known/jwks.json',
            acceptJwtTyp: true,
          },
        },
      });
    });

    it.each([
      ['512kb', 524_288],
      ['100', 100],
      ['100b', 100],
      ['1mb', 1_048_576],
      ['1MB', 1_048_576],
      ['1Mb', 1_048_576],
      ['512KB', 524_288],
    ])('reads BODY_LIMIT=%s as %i bytes', (value, bytes) => {
      const config = loadConfig({ BODY_LIMIT: value });

      expect(config.bodyLimitBytes).toBe(bytes);
    });

    it.each(['0', '1', '65535'])('accepts PORT=%s', (value) => {
      const config = loadConfig({ PORT: value });

      expect(config.port).toBe(Number(value));
    });

    it.each(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'])('accepts LOG_LEVEL=%s', (level) => {
      const config = loadConfig({ LOG_LEVEL: level });

      expect(config.logLevel).toBe(level);
    });

    it('accepts a PUBLIC_BASE_URL that is only an origin', () => {
      const config = loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000' });

      expect(config.publicBaseUrl).toBe('http://localhost:3000');
    });

    it.each([
      ['32 token characters', VALID_API_KEY],
      ['512 characters', 'k'.repeat(512)],
      ['base64 with = padding', `${'k'.repeat(42)}==`],
      ['base64url', 'dGhpcy1pcy1hLXRlc3Qta2V5LW9mLTMyLWJ5dGVz_-'],
    ])('accepts BOOTSTRAP_API_KEY as %s', (_, value) => {
      const config = loadConfig({ BOOTSTRAP_API_KEY: value });

      expect(config.auth.bootstrapApiKey).toBe(value);
    });

    it('accepts OAUTH_ISSUER, OAUTH_AUDIENCE and OAUTH_JWKS_URL together, accepting only at+jwt by default', () => {
      const config = loadConfig(OAUTH);

      expect(config.auth).toEqual({
        bootstrapApiKey: null,
        oauth: {
          issuer: OAUTH.OAUTH_ISSUER,
          audience: OAUTH.OAUTH_AUDIENCE,
          jwksUrl: OAUTH.OAUTH_JWKS_URL,
          acceptJwtTyp: false,
        },
      });
    });

    it.each([
      ['true', true],
      ['false', false],
    ])('reads OAUTH_ACCEPT_JWT_TYP=%s as acceptJwtTyp %s', (value, acceptJwtTyp) => {
      const config = loadConfig({ ...OAUTH, OAUTH_ACCEPT_JWT_TYP: value });

      expect(config.auth.oauth?.acceptJwtTyp).toBe(acceptJwtTyp);
    });

    it.each([
      'https://login.example.com/.well-known/jwks.json',
      'https://login.example.com:8443/keys?version=2',
      'http://localhost/jwks',
      'http://localhost:8080/.well-known/jwks.json',
      'http://127.0.0.1:9000/jwks',
      'http://[::1]:9000/jwks',
    ])('accepts OAUTH_JWKS_URL=%s', (value) => {
      const config = loadConfig({ ...OAUTH, OAUTH_JWKS_URL: value });

      expect(config.auth.oauth?.jwksUrl).toBe(value);
    });
  });

  describe('invalid values', () => {
    it.each([
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['PORT', '65536'],
      ['PORT', '-1'],
      ['API_PREFIX', 'api'],
      ['API_PREFIX', '/api/'],
      ['API_PREFIX', '/'],
      ['BODY_LIMIT', '1gb'],
      ['BODY_LIMIT', '0'],
      ['BODY_LIMIT', '0kb'],
      ['BODY_LIMIT', '1.5mb'],
      ['BODY_LIMIT', '99999999999999999999mb'],
      ['BODY_TIMEOUT', '0'],
      ['BODY_TIMEOUT', '1.5'],
      ['BODY_TIMEOUT', '1000000'],
      ['CURSOR_SECRET', 'short'],
      ['CURSOR_SECRET', 'x'.repeat(31)],
      ['CURSOR_SECRET', 'x'.repeat(1025)],
      ['PUBLIC_BASE_URL', 'ftp://x'],
      ['PUBLIC_BASE_URL', 'https://x/'],
      ['PUBLIC_BASE_URL', 'https://x/base/'],
      ['PUBLIC_BASE_URL', 'https://x?query=1'],
      ['PUBLIC_BASE_URL', 'https://x#fragment'],
      ['PUBLIC_BASE_URL', '/relative'],
      ['LOG_LEVEL', 'loud'],
      ['LOG_LEVEL', 'LOG'],
      ['DATABASE_POOL_SIZE', '0'],
      ['DATABASE_POOL_SIZE', '10000'],
      ['DATABASE_POOL_SIZE', 'ten'],
      ['DATABASE_URL', 'postgres://x/db'],
      ['BOOTSTRAP_API_KEY', 'k'.repeat(31)],
      ['BOOTSTRAP_API_KEY', 'k'.repeat(513)],
      ['BOOTSTRAP_API_KEY', `${'k'.repeat(20)} ${'k'.repeat(20)}`],
      ['BOOTSTRAP_API_KEY', `${'k'.repeat(20)}=${'k'.repeat(20)}`],
      ['BOOTSTRAP_API_KEY', `${'k'.repeat(40)}!`],
      ['BOOTSTRAP_API_KEY', `${'k'.repeat(40)}é`],
      ['THROTTLE_LIMIT', '0'],
      ['THROTTLE_LIMIT', 'many'],
      ['THROTTLE_LIMIT', '1.5'],
      ['THROTTLE_TTL', '0'],
      ['THROTTLE_TTL', '1m'],
      ['THROTTLE_AUTH_FAILURE_LIMIT', '-3'],
      ['TRUST_PROXY', 'true'],
      ['REQUIRE_IF_MATCH', 'yes'],
      ['REVISIONS_PER_POST', '0'],
      ['REVISIONS_PER_POST', '-1'],
      ['REVISIONS_PER_POST', '10000'],
      ['REVISIONS_PER_POST', '5x'],
      ['TRASH_RETENTION', '30'],
      ['TRASH_RETENTION', '0d'],
      ['EVENTS_RETENTION', '30'],
      ['EVENTS_RETENTION', '0d'],
      ['EVENTS_RETENTION', '1w'],
      ['EVENTS_RETENTION', '1234567d'],
      ['EVENTS_HEARTBEAT', '16s'],
      ['EVENTS_HEARTBEAT', '1m'],
      ['EVENTS_HEARTBEAT', '0s'],
      ['EVENTS_DELIVERY', 'no'],
      ['WEBHOOK_SECRET_KEY', 'short'],
      ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', '1'],
      ['WEBHOOK_RETRY_SCHEDULE', '5s,'],
      ['WEBHOOK_RETRY_SCHEDULE', '5s;5m'],
      ['WEBHOOK_TIMEOUT', '1m'],
      ['WEBHOOK_LEASE', '0s'],
      ['METRICS_TOKEN', 'short'],
      ['CORS_ORIGINS', 'app.example.com'],
      ['CORS_ORIGINS', 'https://a.example.com/path'],
      ['SHUTDOWN_TIMEOUT', '0'],
      ['SHUTDOWN_TIMEOUT', '10s'],
      ['TRUST_PROXY', '100'],
      ['REDIS_URL', 'http://cache:6379'],
      ['REDIS_URL', 'cache:6379'],
      ['REDIS_KEY_PREFIX', 'has space'],
      ['REDIS_KEY_PREFIX', 'x'.repeat(65)],
    ])('rejects %s=%s with a ConfigError naming the variable', (name, value) => {
      const error = errorFor({ [name]: value });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/^Invalid configuration: /);
      expect((error as Error).message).toContain(name);
    });

    it('names every invalid variable at once', () => {
      const error = errorFor({ PORT: 'abc', LOG_LEVEL: 'loud', API_PREFIX: 'api', BOOTSTRAP_API_KEY: 'short' });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('PORT');
      expect((error as Error).message).toContain('LOG_LEVEL');
      expect((error as Error).message).toContain('API_PREFIX');
      expect((error as Error).message).toContain('BOOTSTRAP_API_KEY');
    });

    it.each([
      'http://example.com/jwks',
      'http://localhost.example.com/jwks',
      'http://127.0.0.1.example.com/jwks',
      'http://user@localhost/jwks',
      'ftp://login.example.com/jwks',
      'login.example.com/jwks',
      'https://',
    ])('rejects OAUTH_JWKS_URL=%s, with the other OAuth variables valid, with a ConfigError naming it', (value) => {
      const error = errorFor({ ...OAUTH, OAUTH_JWKS_URL: value });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/^Invalid configuration: /);
      expect((error as Error).message).toContain('OAUTH_JWKS_URL must be an https URL');
    });

    it.each(['yes', 'TRUE', '1'])(
      'rejects OAUTH_ACCEPT_JWT_TYP=%s, with the other OAuth variables valid, with a ConfigError naming it',
      (value) => {
        const error = errorFor({ ...OAUTH, OAUTH_ACCEPT_JWT_TYP: value });

        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toMatch(/^Invalid configuration: /);
        expect((error as Error).message).toContain('OAUTH_ACCEPT_JWT_TYP');
      },
    );

    it.each([
      [['OAUTH_ISSUER']],
      [['OAUTH_AUDIENCE']],
      [['OAUTH_JWKS_URL']],
      [['OAUTH_ISSUER', 'OAUTH_AUDIENCE']],
      [['OAUTH_ISSUER', 'OAUTH_JWKS_URL']],
      [['OAUTH_AUDIENCE', 'OAUTH_JWKS_URL']],
    ] as Array<[Array<keyof typeof OAUTH>]>)(
      'rejects %j set without the rest, with a ConfigError naming all three OAuth variables',
      (names) => {
        const env = Object.fromEntries(names.map((name) => [name, OAUTH[name]]));

        const error = errorFor(env);

        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toMatch(/^Invalid configuration: /);
        for (const name of OAUTH_VARIABLES) expect((error as Error).message).toContain(name);
      },
    );

    it('counts an empty OAUTH_AUDIENCE as unset, so the other two alone are refused', () => {
      const error = errorFor({ ...OAUTH, OAUTH_AUDIENCE: '' });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('must be set together');
    });

    it('does not echo the value of an invalid BOOTSTRAP_API_KEY', () => {
      const value = 'bootstrap key with spaces that is long enough';

      const error = errorFor({ BOOTSTRAP_API_KEY: value });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('BOOTSTRAP_API_KEY');
      expect((error as Error).message).not.toContain(value);
    });

    it('does not echo the value of an invalid CURSOR_SECRET', () => {
      const error = errorFor({ CURSOR_SECRET: 'tooShortSecret' });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('tooShortSecret');
    });
  });
});
