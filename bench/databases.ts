import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createConnection, type Connection, type ConnectionOptions, type RowDataPacket } from 'mysql2/promise';
import { parseDatabaseUrl } from '../src/config/database-url.js';
import { redactUrl, type DatabaseTarget } from './options.js';

/** A throwaway database for one run: a fresh SQLite file, or a MySQL/MariaDB database dropped and recreated. */
export interface BenchDatabase {
  kind: 'sqlite' | 'mysql';
  /** DATABASE_URL of the service and the baselines. */
  url: string;
  /** For people: `sqlite` or the URL without its password. */
  label: string;
  /** `SQLite 3.x` or what `SELECT VERSION()` says. */
  serverVersion: string;
  /** A connection of the benchmark's own, for seeding and checks. */
  connect(): Promise<DatabaseConnection>;
  drop(): Promise<void>;
}

export type DatabaseConnection =
  | { kind: 'sqlite'; sqlite: Database.Database; close(): Promise<void> }
  | { kind: 'mysql'; mysql: Connection; close(): Promise<void> };

export type MysqlProbe = { reachable: true; version: string } | { reachable: false; reason: string };

/** Whether the MySQL/MariaDB server of `url` answers (the database itself need not exist). */
export async function probeMysql(url: string): Promise<MysqlProbe> {
  try {
    const connection = await createConnection({ ...mysqlOptions(url), database: undefined, connectTimeout: 3_000 });
    try {
      const [rows] = await connection.query<RowDataPacket[]>('SELECT VERSION() AS version');
      return { reachable: true, version: String(rows[0].version) };
    } finally {
      await connection.end();
    }
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { reachable: false, reason: `cannot connect to ${redactUrl(url)}: ${code ?? message}` };
  }
}

export async function createBenchDatabase(target: DatabaseTarget, workDir: string): Promise<BenchDatabase> {
  return target.kind === 'sqlite' ? createSqliteDatabase(workDir) : createMysqlDatabase(target.url);
}

function createSqliteDatabase(workDir: string): BenchDatabase {
  const path = join(workDir, 'posts.sqlite');
  const probe = new Database(':memory:');
  const version = String(probe.prepare('SELECT sqlite_version() AS version').pluck().get());
  probe.close();
  return {
    kind: 'sqlite',
    url: `sqlite:${path}`,
    label: 'sqlite',
    serverVersion: `SQLite ${version}`,
    connect: () => {
      const sqlite = new Database(path, { timeout: 5_000 });
      sqlite.pragma('journal_mode = WAL');
      return Promise.resolve({ kind: 'sqlite', sqlite, close: () => Promise.resolve(void sqlite.close()) });
    },
    drop: () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
      return Promise.resolve();
    },
  };
}

async function createMysqlDatabase(url: string): Promise<BenchDatabase> {
  const options = mysqlOptions(url);
  const name = options.database!;
  const admin = (): Promise<Connection> => createConnection({ ...options, database: undefined });
  const connection = await admin();
  let version: string;
  try {
    const [rows] = await connection.query<RowDataPacket[]>('SELECT VERSION() AS version');
    version = String(rows[0].version);
    await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  } finally {
    await connection.end();
  }
  return {
    kind: 'mysql',
    url,
    label: redactUrl(url),
    serverVersion: version.includes('MariaDB') ? `MariaDB ${version}` : `MySQL ${version}`,
    connect: async () => {
      const mysql = await createConnection(options);
      return { kind: 'mysql', mysql, close: () => mysql.end() };
    },
    drop: async () => {
      const dropping = await admin();
      try {
        await dropping.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await dropping.end();
      }
    },
  };
}

// The service's own reading of DATABASE_URL, so the benchmark connects where the service does.
function mysqlOptions(url: string): ConnectionOptions {
  const config = parseDatabaseUrl(url, { poolSize: 1 });
  if (config.kind !== 'mysql') throw new Error(`not a MySQL URL: ${redactUrl(url)}`);
  return {
    host: config.host,
    port: config.port,
    user: config.username,
    password: config.password,
    database: config.database,
    charset: 'utf8mb4',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: false,
  };
}

/** Rows of a query on either database, with `?` placeholders. */
export async function queryRows<Row>(
  connection: DatabaseConnection,
  sql: string,
  params: unknown[] = [],
): Promise<Row[]> {
  if (connection.kind === 'sqlite') return connection.sqlite.prepare(sql).all(...params) as Row[];
  const [rows] = await connection.mysql.query<RowDataPacket[]>(sql, params);
  return rows as Row[];
}

/** Runs `work` on a connection of its own, closed afterwards. */
export async function withConnection<T>(
  database: BenchDatabase,
  work: (connection: DatabaseConnection) => Promise<T>,
): Promise<T> {
  const connection = await database.connect();
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}
