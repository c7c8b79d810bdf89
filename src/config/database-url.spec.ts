import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { parseDatabaseUrl } from './database-url.js';

const OPTIONS = { poolSize: 7 };

/** The error parseDatabaseUrl throws for `url`, or undefined when it returns. */
function errorFor(url: string): unknown {
  try {
    parseDatabaseUrl(url, OPTIONS);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('parseDatabaseUrl', () => {
  describe('sqlite', () => {
    it.each([
      ['a relative path', 'sqlite:data/posts.sqlite', 'data/posts.sqlite'],
      ['a relative path with a leading dot', 'sqlite:./posts.sqlite', './posts.sqlite'],
      ['an absolute path', 'sqlite:/var/lib/posts.sqlite', '/var/lib/posts.sqlite'],
      [
        'an absolute path written as a URL with three slashes',
        'sqlite:///abs/path/posts.sqlite',
        '/abs/path/posts.sqlite',
      ],
      ['a relative path written after two slashes', 'sqlite://relative/posts.sqlite', 'relative/posts.sqlite'],
      ['the in-memory database', 'sqlite::memory:', ':memory:'],
    ])('reads %s', (_label, url, path) => {
      const config = parseDatabaseUrl(url, OPTIONS);

      expect(config).toEqual({ kind: 'sqlite', path, poolSize: 7 });
    });

    it.each([
      ['no path at all', 'sqlite:'],
      ['only two slashes', 'sqlite://'],
    ])('rejects a sqlite URL with %s', (_label, url) => {
      const error = errorFor(url);

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(
        'Invalid configuration: DATABASE_URL sqlite: needs a file path or :memory:',
      );
    });
  });

  describe('mysql and mariadb', () => {
    it('reads host, port, user, password and database', () => {
      const config = parseDatabaseUrl('mysql://app:pa55@db.example.com:3307/posts', OPTIONS);

      expect(config).toEqual({
        kind: 'mysql',
        host: 'db.example.com',
        port: 3307,
        username: 'app',
        password: 'pa55',
        database: 'posts',
        poolSize: 7,
      });
    });

    it('uses port 3306 when none is given', () => {
      const config = parseDatabaseUrl('mysql://app:pa55@db.example.com/posts', OPTIONS);

      expect(config).toMatchObject({ kind: 'mysql', host: 'db.example.com', port: 3306 });
    });

    it('decodes percent-encoded characters in the user name and password', () => {
      const config = parseDatabaseUrl('mysql://us%40er:p%40ss%3Aw%2Fd%25%20x@localhost/posts', OPTIONS);

      expect(config).toMatchObject({ username: 'us@er', password: 'p@ss:w/d% x' });
    });

    it('decodes a percent-encoded database name', () => {
      const config = parseDatabaseUrl('mysql://localhost/my%20posts', OPTIONS);

      expect(config).toMatchObject({ database: 'my posts' });
    });

    it('defaults the user to root and the password to empty', () => {
      const config = parseDatabaseUrl('mysql://localhost/posts', OPTIONS);

      expect(config).toMatchObject({ host: 'localhost', username: 'root', password: '', database: 'posts' });
    });

    it('accepts the mariadb:// scheme as a MySQL connection', () => {
      const config = parseDatabaseUrl('mariadb://app:pw@maria.internal:3308/blog', OPTIONS);

      expect(config).toEqual({
        kind: 'mysql',
        host: 'maria.internal',
        port: 3308,
        username: 'app',
        password: 'pw',
        database: 'blog',
        poolSize: 7,
      });
    });

    it('passes the pool size through', () => {
      const config = parseDatabaseUrl('mysql://localhost/posts', { poolSize: 42 });

      expect(config.poolSize).toBe(42);
    });

    it('gives an IPv6 host without its URL brackets, as a socket connect needs it', () => {
      const config = parseDatabaseUrl('mysql://app:pw@[::1]:3307/posts', OPTIONS);

      expect(config).toMatchObject({ host: '::1', port: 3307 });
    });
  });

  describe('errors', () => {
    it.each([
      ['an empty sqlite path', 'sqlite:', 'sqlite: needs a file path'],
      ['an unsupported scheme', 'postgres://x/db', 'scheme postgres: is not supported'],
      ['text that is not a URL', 'not a url', 'DATABASE_URL must look like mysql://'],
      ['a mysql URL without a database', 'mysql://host', 'DATABASE_URL must name a database'],
      ['a mysql URL with an empty database', 'mysql://host/', 'DATABASE_URL must name a database'],
      ['a mysql URL with a nested path', 'mysql://host/a/b', 'DATABASE_URL must name a database'],
      ['a mysql URL with an out-of-range port', 'mysql://host:99999/db', 'DATABASE_URL must look like mysql://'],
    ])('rejects %s with a ConfigError', (_label, url, fragment) => {
      const error = errorFor(url);

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(fragment);
      expect((error as Error).message).toMatch(/^Invalid configuration: DATABASE_URL /);
    });

    it.each([
      ['no database', 'mysql://u:s3cret@host'],
      ['no host', 'mysql://u:s3cret@/'],
      ['an unsupported scheme', 'postgres://u:s3cret@host/db'],
      ['an out-of-range port', 'mysql://u:s3cret@host:99999/db'],
      ['a nested database path', 'mysql://u:s3cret@host/a/b'],
    ])('never echoes the password in the error for a URL with %s', (_label, url) => {
      const error = errorFor(url);

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('s3cret');
      expect(String(error)).not.toContain('s3cret');
    });

    it.each([
      ['a password with a bare percent sign', 'mysql://u:100%@host/db'],
      ['a database name with an invalid percent escape', 'mysql://u:pw@host/db%zz'],
    ])('rejects %s with a ConfigError rather than a URIError', (_label, url) => {
      const error = errorFor(url);

      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('100%');
    });
  });
});
