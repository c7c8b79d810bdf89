import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';

export type Dialect = 'sqlite' | 'mysql';

export const dialect: Dialect = process.env.TEST_DATABASE === 'mysql' ? 'mysql' : 'sqlite';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A database of its own for one test file: in-memory SQLite, or a freshly created MySQL database. */
export async function createTestDatabase(options: { sqlitePath?: string } = {}): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    return { url: `sqlite:${options.sqlitePath ?? ':memory:'}`, drop: async () => {} };
  }
  const server = new URL(process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
  const name = `posts_e2e_${randomBytes(6).toString('hex')}`;
  const admin = await createConnection({ uri: server.toString() });
  try {
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const connection = await createConnection({ uri: server.toString() });
      try {
        await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await connection.end();
      }
    },
  };
}
