import type { MigrationInterface, QueryRunner } from 'typeorm';
import { exactTextCollation, isMysql } from '../dialect.js';

/**
 * A post's editorial life (contract §10): a status (draft, scheduled, published) and the time it is
 * (or was, or will be) published, the revisions a write replaced, and a trash that a delete moves the
 * post into. Every post of an older release was public: it becomes published at its creation.
 *
 * The list's keyset indexes lead with the status within each filter (all posts, one author, one
 * owner), so `idx_posts_author_id` gives way to `idx_posts_author_status_id`.
 */
export class AddEditorialLife1795000600000 implements MigrationInterface {
  name = 'AddEditorialLife1795000600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      const collation = await exactTextCollation(queryRunner);
      const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`;
      // One statement, so the table is rebuilt once for the columns and the indexes together.
      await queryRunner.query(
        `ALTER TABLE \`posts\`
          ADD COLUMN \`status\` VARCHAR(9) NOT NULL DEFAULT 'published',
          ADD COLUMN \`published_at\` DATETIME(3) NULL,
          DROP INDEX \`idx_posts_author_id\`,
          ADD INDEX \`idx_posts_status_id\` (\`status\`, \`id\`),
          ADD INDEX \`idx_posts_author_status_id\` (\`author\`, \`status\`, \`id\`),
          ADD INDEX \`idx_posts_owner_status_id\` (\`owner_id\`, \`status\`, \`id\`),
          ADD INDEX \`idx_posts_scheduled\` (\`status\`, \`published_at\`)`,
      );
      await queryRunner.query('UPDATE `posts` SET `published_at` = `created_at`');
      await queryRunner.query(
        `CREATE TABLE \`post_revisions\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`post_id\` BIGINT UNSIGNED NOT NULL,
          \`version\` INT UNSIGNED NOT NULL,
          \`title\` VARCHAR(200) NOT NULL,
          \`content\` MEDIUMTEXT NOT NULL,
          \`author\` VARCHAR(100) NOT NULL,
          \`status\` VARCHAR(9) NOT NULL,
          \`published_at\` DATETIME(3) NULL,
          \`revised_at\` DATETIME(3) NOT NULL,
          PRIMARY KEY (\`id\`),
          UNIQUE KEY \`uq_post_revisions_post_version\` (\`post_id\`, \`version\`)
        ) ${table}`,
      );
      // The id is the post's, kept for a restore: never auto-incremented here.
      await queryRunner.query(
        `CREATE TABLE \`posts_trash\` (
          \`id\` BIGINT UNSIGNED NOT NULL,
          \`title\` VARCHAR(200) NOT NULL,
          \`content\` MEDIUMTEXT NOT NULL,
          \`author\` VARCHAR(100) NOT NULL,
          \`owner_id\` VARCHAR(300) NULL,
          \`version\` INT UNSIGNED NOT NULL,
          \`status\` VARCHAR(9) NOT NULL,
          \`published_at\` DATETIME(3) NULL,
          \`created_at\` DATETIME(3) NOT NULL,
          \`updated_at\` DATETIME(3) NOT NULL,
          \`deleted_at\` DATETIME(3) NOT NULL,
          PRIMARY KEY (\`id\`),
          KEY \`idx_posts_trash_owner_id\` (\`owner_id\`, \`id\`),
          KEY \`idx_posts_trash_deleted_at\` (\`deleted_at\`, \`id\`)
        ) ${table}`,
      );
      return;
    }

    await queryRunner.query(`ALTER TABLE "posts" ADD COLUMN "status" VARCHAR(9) NOT NULL DEFAULT 'published'`);
    await queryRunner.query('ALTER TABLE "posts" ADD COLUMN "published_at" DATETIME NULL');
    // Before the indexes are built, so the copy does not maintain them row by row.
    await queryRunner.query('UPDATE "posts" SET "published_at" = "created_at"');
    await queryRunner.query('DROP INDEX "idx_posts_author_id"');
    await queryRunner.query('CREATE INDEX "idx_posts_status_id" ON "posts" ("status", "id")');
    await queryRunner.query('CREATE INDEX "idx_posts_author_status_id" ON "posts" ("author", "status", "id")');
    // Partial, here and below: only drafts and scheduled posts pay for these on every create, the
    // published ones (nearly all) do not (MySQL has no partial index).
    await queryRunner.query(
      `CREATE INDEX "idx_posts_owner_status_id" ON "posts" ("owner_id", "status", "id") WHERE "status" <> 'published'`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_posts_scheduled" ON "posts" ("published_at") WHERE "status" = 'scheduled'`,
    );
    await queryRunner.query(
      `CREATE TABLE "post_revisions" (
        "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
        "post_id" INTEGER NOT NULL,
        "version" INTEGER NOT NULL,
        "title" VARCHAR(200) NOT NULL,
        "content" TEXT NOT NULL,
        "author" VARCHAR(100) NOT NULL,
        "status" VARCHAR(9) NOT NULL,
        "published_at" DATETIME NULL,
        "revised_at" DATETIME NOT NULL
      )`,
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_post_revisions_post_version" ON "post_revisions" ("post_id", "version")',
    );
    // No AUTOINCREMENT: the id is the post's, kept for a restore.
    await queryRunner.query(
      `CREATE TABLE "posts_trash" (
        "id" INTEGER PRIMARY KEY NOT NULL,
        "title" VARCHAR(200) NOT NULL,
        "content" TEXT NOT NULL,
        "author" VARCHAR(100) NOT NULL,
        "owner_id" VARCHAR(300) NULL,
        "version" INTEGER NOT NULL,
        "status" VARCHAR(9) NOT NULL,
        "published_at" DATETIME NULL,
        "created_at" DATETIME NOT NULL,
        "updated_at" DATETIME NOT NULL,
        "deleted_at" DATETIME NOT NULL
      )`,
    );
    await queryRunner.query('CREATE INDEX "idx_posts_trash_owner_id" ON "posts_trash" ("owner_id", "id")');
    await queryRunner.query('CREATE INDEX "idx_posts_trash_deleted_at" ON "posts_trash" ("deleted_at", "id")');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The older release has no states: every post there is public. Reverting would publish what is
    // not meant to be seen yet, so it is refused until no such post is left.
    const [{ hidden }] = (await queryRunner.query(
      `SELECT COUNT(*) AS hidden FROM posts WHERE status IN ('draft', 'scheduled')`,
    )) as Array<{ hidden: number | string }>;
    if (Number(hidden) > 0) {
      throw new Error(
        `${Number(hidden)} draft or scheduled posts would become public if this migration were reverted; publish or delete them first`,
      );
    }

    // The older release treats a delete as final and keeps no revisions: the trashed posts and the
    // revisions are dropped with their tables, not moved back.
    if (isMysql(queryRunner)) {
      await queryRunner.query('DROP TABLE `posts_trash`');
      await queryRunner.query('DROP TABLE `post_revisions`');
      await queryRunner.query(
        `ALTER TABLE \`posts\`
          DROP INDEX \`idx_posts_scheduled\`,
          DROP INDEX \`idx_posts_owner_status_id\`,
          DROP INDEX \`idx_posts_author_status_id\`,
          DROP INDEX \`idx_posts_status_id\`,
          ADD INDEX \`idx_posts_author_id\` (\`author\`, \`id\`),
          DROP COLUMN \`published_at\`,
          DROP COLUMN \`status\``,
      );
      return;
    }
    await queryRunner.query('DROP TABLE "posts_trash"');
    await queryRunner.query('DROP TABLE "post_revisions"');
    // SQLite refuses to drop a column that an index (or an index's WHERE) names: the indexes go first.
    for (const index of [
      'idx_posts_scheduled',
      'idx_posts_owner_status_id',
      'idx_posts_author_status_id',
      'idx_posts_status_id',
    ]) {
      await queryRunner.query(`DROP INDEX "${index}"`);
    }
    await queryRunner.query('CREATE INDEX "idx_posts_author_id" ON "posts" ("author", "id")');
    await queryRunner.query('ALTER TABLE "posts" DROP COLUMN "published_at"');
    await queryRunner.query('ALTER TABLE "posts" DROP COLUMN "status"');
  }
}
