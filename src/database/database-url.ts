import { ConfigError } from '../config/config-error.js';

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
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (database === '' || database.includes('/')) {
    throw new ConfigError('Invalid configuration: DATABASE_URL must name a database, as in mysql://host:3306/posts');
  }
  return {
    kind: 'mysql',
    host: parsed.hostname,
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    username: decodeURIComponent(parsed.username || 'root'),
    password: decodeURIComponent(parsed.password),
    database,
    poolSize: options.poolSize,
  };
}
