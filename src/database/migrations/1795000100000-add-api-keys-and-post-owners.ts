import type { MigrationInterface, QueryRunner } from 'typeorm';
import { exactTextCollation, isMysql } from '../dialect.js';

export class AddApiKeysAndPostOwners1795000100000 implements MigrationInterface {
  name = 'AddApiKeysAndPostOwners1795000100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      const collation = await exactTextCollation(queryRunner);
      await queryRunner.query(
        `CREATE TABLE \`api_keys\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`name\` VARCHAR(100) NOT NULL,
          \`token_digest\` CHAR(64) NOT NULL,
          \`token_hint\` VARCHAR(16) NOT NULL,
          \`scopes\` VARCHAR(200) NOT NULL,
          \`expires_at\` DATETIME(3) NULL,
          \`created_at\` DATETIME(3) NOT NULL,
          \`last_used_at\` DATETIME(3) NULL,
          \`revoked_at\` DATETIME(3) NULL,
          PRIMARY KEY (\`id\`),
          UNIQUE KEY \`uq_api_keys_token_digest\` (\`token_digest\`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`,
      );
      // The principal that created the post: `api-key:<id>` or `oauth:<sub>`. NULL for posts that
      // predate ownership; only an admin may change those.
      await queryRunner.query('ALTER TABLE `posts` ADD COLUMN `owner_id` VARCHAR(300) NULL');
      return;
    }

    await queryRunner.query(
      `CREATE TABLE "api_keys" (
        "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
        "name" VARCHAR(100) NOT NULL,
        "token_digest" CHAR(64) NOT NULL,
        "token_hint" VARCHAR(16) NOT NULL,
        "scopes" VARCHAR(200) NOT NULL,
        "expires_at" DATETIME NULL,
        "created_at" DATETIME NOT NULL,
        "last_used_at" DATETIME NULL,
        "revoked_at" DATETIME NULL
      )`,
    );
    await queryRunner.query('CREATE UNIQUE INDEX "uq_api_keys_token_digest" ON "api_keys" ("token_digest")');
    await queryRunner.query('ALTER TABLE "posts" ADD COLUMN "owner_id" VARCHAR(300) NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      await queryRunner.query('ALTER TABLE `posts` DROP COLUMN `owner_id`');
      await queryRunner.query('DROP TABLE `api_keys`');
      return;
    }
    await queryRunner.query('ALTER TABLE "posts" DROP COLUMN "owner_id"');
    await queryRunner.query('DROP TABLE "api_keys"');
  }
}
