import type { QueryRunner } from 'typeorm';

export function isMysql(queryRunner: QueryRunner): boolean {
  const type = queryRunner.connection.options.type;
  return type === 'mysql' || type === 'mariadb';
}

/**
 * The utf8mb4 collation that compares strings byte for byte and without PAD SPACE, so that
 * 'Ada' and 'Ada ' are different authors. MariaDB and MySQL 8 name it differently.
 */
export async function exactTextCollation(queryRunner: QueryRunner): Promise<string> {
  const [row] = (await queryRunner.query('SELECT VERSION() AS version')) as Array<{ version: string }>;
  return row.version.includes('MariaDB') ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
}
