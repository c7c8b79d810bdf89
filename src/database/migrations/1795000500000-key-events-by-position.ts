import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql } from '../dialect.js';

/**
 * Makes an event cheaper to write, which every post write pays for (the outbox's budget: at most 15%
 * of create throughput).
 *
 * - SQLite: `position` becomes the table's key (INTEGER PRIMARY KEY AUTOINCREMENT, the rowid) and
 *   `id` a generated copy of it. SQLite runs one write transaction at a time, so rowids are handed
 *   out in commit order, and a rolled-back insert gives its rowid back with the transaction
 *   (AUTOINCREMENT's counter is in it): the rowid is already a feed position with no gap, and
 *   AUTOINCREMENT never hands out one that retention removed. The unique index on `position`, the
 *   trigger that kept `event_sequence.last_position` in step, and the position subquery go: the last
 *   position is AUTOINCREMENT's counter (`sqlite_sequence`).
 * - Both: `idx_events_occurred_at` goes. Retention removes the oldest events in feed order
 *   (events-retention.ts), through the position key, up to the first one still within the retention.
 *
 * Down restores the layout of 1795000300000, with `last_position` at the last position handed out.
 */
export class KeyEventsByPosition1795000500000 implements MigrationInterface {
  name = 'KeyEventsByPosition1795000500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      await queryRunner.query('ALTER TABLE `events` DROP INDEX `idx_events_occurred_at`');
      return;
    }
    await queryRunner.query(
      `CREATE TABLE "events_by_position" (
        "id" INTEGER GENERATED ALWAYS AS ("position") VIRTUAL,
        "position" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
        "type" VARCHAR(40) NOT NULL,
        "post_id" INTEGER NOT NULL,
        "occurred_at" DATETIME NOT NULL,
        "data" TEXT NOT NULL
      )`,
    );
    // Events keep their positions. One left unnumbered (its writer stopped between its commit and
    // the sequencer of an older release) is numbered after them, in insert order.
    await queryRunner.query(
      `INSERT INTO "events_by_position" ("position", "type", "post_id", "occurred_at", "data")
       SELECT "position", "type", "post_id", "occurred_at", "data" FROM "events"
       ORDER BY "position" IS NULL, "position", "id"`,
    );
    await queryRunner.query('DROP TABLE "events"');
    await queryRunner.query('ALTER TABLE "events_by_position" RENAME TO "events"');
    await queryRunner.query('CREATE INDEX "idx_events_type_position" ON "events" ("type", "position")');
    // Positions already handed out, removed by retention since, are never handed out again.
    await queryRunner.query(`DELETE FROM "sqlite_sequence" WHERE "name" = 'events'`);
    await queryRunner.query(
      `INSERT INTO "sqlite_sequence" ("name", "seq")
       SELECT 'events', MAX("last_position", IFNULL((SELECT MAX("position") FROM "events"), 0))
       FROM "event_sequence" WHERE "id" = 1`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      await queryRunner.query('ALTER TABLE `events` ADD INDEX `idx_events_occurred_at` (`occurred_at`)');
      return;
    }
    await queryRunner.query(
      `UPDATE "event_sequence" SET "last_position" =
         MAX("last_position", IFNULL((SELECT "seq" FROM "sqlite_sequence" WHERE "name" = 'events'), 0))
       WHERE "id" = 1`,
    );
    await queryRunner.query(
      `CREATE TABLE "events_by_id" (
        "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
        "position" INTEGER NULL,
        "type" VARCHAR(40) NOT NULL,
        "post_id" INTEGER NOT NULL,
        "occurred_at" DATETIME NOT NULL,
        "data" TEXT NOT NULL
      )`,
    );
    await queryRunner.query(
      `INSERT INTO "events_by_id" ("id", "position", "type", "post_id", "occurred_at", "data")
       SELECT "position", "position", "type", "post_id", "occurred_at", "data" FROM "events" ORDER BY "position"`,
    );
    await queryRunner.query('DROP TABLE "events"');
    await queryRunner.query('ALTER TABLE "events_by_id" RENAME TO "events"');
    await queryRunner.query('CREATE UNIQUE INDEX "uq_events_position" ON "events" ("position")');
    await queryRunner.query('CREATE INDEX "idx_events_type_position" ON "events" ("type", "position")');
    await queryRunner.query('CREATE INDEX "idx_events_occurred_at" ON "events" ("occurred_at")');
    await queryRunner.query(
      `CREATE TRIGGER "trg_events_position" AFTER INSERT ON "events" WHEN NEW."position" IS NOT NULL
       BEGIN UPDATE "event_sequence" SET "last_position" = NEW."position" WHERE "id" = 1; END`,
    );
  }
}
