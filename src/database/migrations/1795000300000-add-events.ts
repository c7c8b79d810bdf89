import type { MigrationInterface, QueryRunner } from 'typeorm';
import { exactTextCollation, isMysql } from '../dialect.js';

/**
 * The events outbox (contract §9). `id` is the insert order; `position` is the feed order, set after
 * the writing transaction has committed by one sequencer at a time (events/event-sequencer.ts), so
 * a reader walking positions never meets a gap that a late commit fills. `event_sequence` holds the
 * last position handed out (its one row, id 1, is the sequencers' lock) and the last one removed by
 * retention.
 */
export class AddEvents1795000300000 implements MigrationInterface {
  name = 'AddEvents1795000300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      const collation = await exactTextCollation(queryRunner);
      await queryRunner.query(
        `CREATE TABLE \`events\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`position\` BIGINT UNSIGNED NULL,
          \`type\` VARCHAR(40) NOT NULL,
          \`post_id\` BIGINT UNSIGNED NOT NULL,
          \`occurred_at\` DATETIME(3) NOT NULL,
          \`data\` MEDIUMTEXT NOT NULL,
          PRIMARY KEY (\`id\`),
          UNIQUE KEY \`uq_events_position\` (\`position\`),
          KEY \`idx_events_type_position\` (\`type\`, \`position\`),
          KEY \`idx_events_occurred_at\` (\`occurred_at\`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`,
      );
      await queryRunner.query(
        `CREATE TABLE \`event_sequence\` (
          \`id\` TINYINT UNSIGNED NOT NULL,
          \`last_position\` BIGINT UNSIGNED NOT NULL,
          \`purged_through\` BIGINT UNSIGNED NOT NULL,
          PRIMARY KEY (\`id\`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`,
      );
      await queryRunner.query('INSERT INTO `event_sequence` VALUES (1, 0, 0)');
      return;
    }
    await queryRunner.query(
      `CREATE TABLE "events" (
        "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
        "position" INTEGER NULL,
        "type" VARCHAR(40) NOT NULL,
        "post_id" INTEGER NOT NULL,
        "occurred_at" DATETIME NOT NULL,
        "data" TEXT NOT NULL
      )`,
    );
    await queryRunner.query('CREATE UNIQUE INDEX "uq_events_position" ON "events" ("position")');
    await queryRunner.query('CREATE INDEX "idx_events_type_position" ON "events" ("type", "position")');
    await queryRunner.query('CREATE INDEX "idx_events_occurred_at" ON "events" ("occurred_at")');
    await queryRunner.query(
      `CREATE TABLE "event_sequence" (
        "id" INTEGER PRIMARY KEY NOT NULL,
        "last_position" INTEGER NOT NULL,
        "purged_through" INTEGER NOT NULL
      )`,
    );
    await queryRunner.query(`INSERT INTO "event_sequence" VALUES (1, 0, 0)`);
    // SQLite: an event takes its position in its own INSERT (one write transaction at a time, so no
    // gap); this keeps the sequence row in step, inside the engine, without a second statement.
    await queryRunner.query(
      `CREATE TRIGGER "trg_events_position" AFTER INSERT ON "events" WHEN NEW."position" IS NOT NULL
       BEGIN UPDATE "event_sequence" SET "last_position" = NEW."position" WHERE "id" = 1; END`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMysql(queryRunner) ? '`' : '"';
    await queryRunner.query(`DROP TABLE ${quote}event_sequence${quote}`);
    await queryRunner.query(`DROP TABLE ${quote}events${quote}`);
  }
}
