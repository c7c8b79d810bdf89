import type { MigrationInterface, QueryRunner } from 'typeorm';
import { exactTextCollation, isMysql } from '../dialect.js';

export class CreatePosts1795000000000 implements MigrationInterface {
  name = 'CreatePosts1795000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      // Binary NO PAD collation: filters are exact (case, accents and trailing spaces all count),
      // as they are on SQLite. MEDIUMTEXT because 100,000 characters of utf8mb4 exceed TEXT's 64 KiB.
      const collation = await exactTextCollation(queryRunner);
      await queryRunner.query(
        `CREATE TABLE \`posts\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`title\` VARCHAR(200) NOT NULL,
          \`content\` MEDIUMTEXT NOT NULL,
          \`author\` VARCHAR(100) NOT NULL,
          \`created_at\` DATETIME(3) NOT NULL,
          \`updated_at\` DATETIME(3) NOT NULL,
          PRIMARY KEY (\`id\`),
          KEY \`idx_posts_author_id\` (\`author\`, \`id\`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`,
      );
      return;
    }

    // AUTOINCREMENT so that the id of a deleted post is never handed out again.
    await queryRunner.query(
      `CREATE TABLE "posts" (
        "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
        "title" VARCHAR(200) NOT NULL,
        "content" TEXT NOT NULL,
        "author" VARCHAR(100) NOT NULL,
        "created_at" DATETIME NOT NULL,
        "updated_at" DATETIME NOT NULL
      )`,
    );
    await queryRunner.query(`CREATE INDEX "idx_posts_author_id" ON "posts" ("author", "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(isMysql(queryRunner) ? 'DROP TABLE `posts`' : 'DROP TABLE "posts"');
  }
}
