import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { loadConfig } from './environment.js';

const VALID_SECRET = 'x'.repeat(32);

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
        cursorSecret: null,
        publicBaseUrl: null,
        logLevel: 'log',
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
        CURSOR_SECRET: '',
        PUBLIC_BASE_URL: '',
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
        CURSOR_SECRET: VALID_SECRET,
        PUBLIC_BASE_URL: 'https://blog.example.com/base',
        LOG_LEVEL: 'debug',
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
        cursorSecret: VALID_SECRET,
        publicBaseUrl: 'https://blog.example.com/base',
        logLevel: 'debug',
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
    ])('rejects %s=%s with a ConfigError naming the variable', (name, value) => {
      const error = errorFor({ [name]: value });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/^Invalid configuration: /);
      expect((error as Error).message).toContain(name);
    });

    it('names every invalid variable at once', () => {
      const error = errorFor({ PORT: 'abc', LOG_LEVEL: 'loud', API_PREFIX: 'api' });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('PORT');
      expect((error as Error).message).toContain('LOG_LEVEL');
      expect((error as Error).message).toContain('API_PREFIX');
    });

    it('does not echo the value of an invalid CURSOR_SECRET', () => {
      const error = errorFor({ CURSOR_SECRET: 'tooShortSecret' });

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('tooShortSecret');
    });
  });
});
