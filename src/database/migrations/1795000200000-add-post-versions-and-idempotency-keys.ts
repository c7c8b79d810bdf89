import type { MigrationInterface, QueryRunner } from 'typeorm';
import { exactTextCollation, isMysql } from '../dialect.js';

export class AddPostVersionsAndIdempotencyKeys1795000200000 implements MigrationInterface {
  name = 'AddPostVersionsAndIdempotencyKeys1795000200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      const collation = await exactTextCollation(queryRunner);
      // Incremented by every write in the same UPDATE; the ETag is built from it.
      await queryRunner.query('ALTER TABLE `posts` ADD COLUMN `version` INT UNSIGNED NOT NULL DEFAULT 1');
      await queryRunner.query(
        `CREATE TABLE \`idempotency_keys\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`principal_id\` VARCHAR(300) NOT NULL,
          \`idempotency_key\` VARCHAR(255) NOT NULL,
          \`request_digest\` CHAR(64) NOT NULL,
          \`response_status\` SMALLINT UNSIGNED NULL,
          \`response_body\` MEDIUMTEXT NULL,
          \`response_headers\` TEXT NULL,
          \`locked_at\` DATETIME(3) NOT NULL,
          \`expires_at\` DATETIME(3) NOT NULL,
          PRIMARY KEY (\`id\`),
          UNIQUE KEY \`uq_idempotency_keys_principal_key\` (\`principal_id\`, \`idempotency_key\`),
          KEY \`idx_idempotency_keys_expires_at\` (\`expires_at\`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`,
      );
      return;
    }
    await queryRunner.query('ALTER TABLE "posts" ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1');
    await queryRunner.query(
      `CREATE TABLE "idempotency_keys" (
        "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
        "principal_id" VARCHAR(300) NOT NULL,
        "idempotency_key" VARCHAR(255) NOT NULL,
        "request_digest" CHAR(64) NOT NULL,
        "response_status" INTEGER NULL,
        "response_body" TEXT NULL,
        "response_headers" TEXT NULL,
        "locked_at" DATETIME NOT NULL,
        "expires_at" DATETIME NOT NULL
      )`,
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_idempotency_keys_principal_key" ON "idempotency_keys" ("principal_id", "idempotency_key")',
    );
    await queryRunner.query('CREATE INDEX "idx_idempotency_keys_expires_at" ON "idempotency_keys" ("expires_at")');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      await queryRunner.query('DROP TABLE `idempotency_keys`');
      await queryRunner.query('ALTER TABLE `posts` DROP COLUMN `version`');
      return;
    }
    await queryRunner.query('DROP TABLE "idempotency_keys"');
    await queryRunner.query('ALTER TABLE "posts" DROP COLUMN "version"');
  }
}
