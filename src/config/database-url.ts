import { ConfigError } from './config-error.js';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string; poolSize: number }
  | {
      kind: 'mysql';
      host: string;
      port: number;
      username: string;
      password: string;
      database: string;
      poolSize: number;
    };

/**
 * Accepts `mysql://user:pass@host:3306/db`, `sqlite:PATH` and `sqlite::memory:`.
 * Errors never echo the URL: it may carry a password.
 */
export function parseDatabaseUrl(url: string, options: { poolSize: number }): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (path === '') throw new ConfigError('Invalid configuration: DATABASE_URL sqlite: needs a file path or :memory:');
    return { kind: 'sqlite', path, poolSize: options.poolSize };
  }

  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(
      'Invalid configuration: DATABASE_URL must look like mysql://user:pass@host:3306/db, sqlite:PATH or sqlite::memory:',
    );
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new ConfigError(
      `Invalid configuration: DATABASE_URL scheme ${parsed.protocol} is not supported (use mysql:, mariadb: or sqlite:)`,
    );
  }
  const database = decodeComponent(parsed.pathname.replace(/^\//, ''), 'database name');
  if (database === '' || database.includes('/')) {
    throw new ConfigError('Invalid configuration: DATABASE_URL must name a database, as in mysql://host:3306/posts');
  }
  return {
    kind: 'mysql',
    // URL keeps the brackets of an IPv6 literal ([::1]); the driver wants the bare address.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    username: decodeComponent(parsed.username || 'root', 'user name'),
    password: decodeComponent(parsed.password, 'password'),
    database,
    poolSize: options.poolSize,
  };
}

function decodeComponent(value: string, what: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new ConfigError(`Invalid configuration: DATABASE_URL has a malformed percent-escape in its ${what}`);
  }
}
