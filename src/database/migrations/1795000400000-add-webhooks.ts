import type { MigrationInterface, QueryRunner } from 'typeorm';
import { exactTextCollation, isMysql } from '../dialect.js';

/**
 * Webhooks (contract §9): the subscriptions, one delivery per (event, webhook) with its lease and
 * retry state, every attempt for the delivery log, and `webhook_dispatch`, whose one row records the
 * last event fanned out to deliveries (and is the dispatchers' lock).
 */
export class AddWebhooks1795000400000 implements MigrationInterface {
  name = 'AddWebhooks1795000400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMysql(queryRunner)) {
      const collation = await exactTextCollation(queryRunner);
      const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`;
      await queryRunner.query(
        `CREATE TABLE \`webhooks\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`url\` VARCHAR(2048) NOT NULL,
          \`event_types\` VARCHAR(200) NOT NULL,
          \`description\` VARCHAR(500) NOT NULL,
          \`enabled\` TINYINT(1) NOT NULL,
          \`disabled_reason\` VARCHAR(300) NULL,
          \`secret\` VARCHAR(300) NOT NULL,
          \`previous_secret\` VARCHAR(300) NULL,
          \`previous_secret_expires_at\` DATETIME(3) NULL,
          \`created_at\` DATETIME(3) NOT NULL,
          \`updated_at\` DATETIME(3) NOT NULL,
          PRIMARY KEY (\`id\`)
        ) ${table}`,
      );
      await queryRunner.query(
        `CREATE TABLE \`webhook_deliveries\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`webhook_id\` BIGINT UNSIGNED NOT NULL,
          \`event_id\` BIGINT UNSIGNED NOT NULL,
          \`state\` VARCHAR(16) NOT NULL,
          \`attempts\` INT UNSIGNED NOT NULL,
          \`next_attempt_at\` DATETIME(3) NOT NULL,
          \`lease_until\` DATETIME(3) NULL,
          \`created_at\` DATETIME(3) NOT NULL,
          PRIMARY KEY (\`id\`),
          UNIQUE KEY \`uq_webhook_deliveries_webhook_event\` (\`webhook_id\`, \`event_id\`),
          KEY \`idx_webhook_deliveries_state_next\` (\`state\`, \`next_attempt_at\`)
        ) ${table}`,
      );
      await queryRunner.query(
        `CREATE TABLE \`webhook_attempts\` (
          \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
          \`delivery_id\` BIGINT UNSIGNED NOT NULL,
          \`webhook_id\` BIGINT UNSIGNED NOT NULL,
          \`event_id\` BIGINT UNSIGNED NOT NULL,
          \`attempt\` INT UNSIGNED NOT NULL,
          \`started_at\` DATETIME(3) NOT NULL,
          \`status_code\` SMALLINT UNSIGNED NULL,
          \`error\` VARCHAR(500) NULL,
          \`duration_ms\` INT UNSIGNED NOT NULL,
          \`next_retry_at\` DATETIME(3) NULL,
          PRIMARY KEY (\`id\`),
          KEY \`idx_webhook_attempts_webhook_id\` (\`webhook_id\`, \`id\`)
        ) ${table}`,
      );
      await queryRunner.query(
        `CREATE TABLE \`webhook_dispatch\` (
          \`id\` TINYINT UNSIGNED NOT NULL,
          \`dispatched_through\` BIGINT UNSIGNED NOT NULL,
          PRIMARY KEY (\`id\`)
        ) ${table}`,
      );
    } else {
      await queryRunner.query(
        `CREATE TABLE "webhooks" (
          "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
          "url" VARCHAR(2048) NOT NULL,
          "event_types" VARCHAR(200) NOT NULL,
          "description" VARCHAR(500) NOT NULL,
          "enabled" BOOLEAN NOT NULL,
          "disabled_reason" VARCHAR(300) NULL,
          "secret" VARCHAR(300) NOT NULL,
          "previous_secret" VARCHAR(300) NULL,
          "previous_secret_expires_at" DATETIME NULL,
          "created_at" DATETIME NOT NULL,
          "updated_at" DATETIME NOT NULL
        )`,
      );
      await queryRunner.query(
        `CREATE TABLE "webhook_deliveries" (
          "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
          "webhook_id" INTEGER NOT NULL,
          "event_id" INTEGER NOT NULL,
          "state" VARCHAR(16) NOT NULL,
          "attempts" INTEGER NOT NULL,
          "next_attempt_at" DATETIME NOT NULL,
          "lease_until" DATETIME NULL,
          "created_at" DATETIME NOT NULL
        )`,
      );
      await queryRunner.query(
        'CREATE UNIQUE INDEX "uq_webhook_deliveries_webhook_event" ON "webhook_deliveries" ("webhook_id", "event_id")',
      );
      await queryRunner.query(
        'CREATE INDEX "idx_webhook_deliveries_state_next" ON "webhook_deliveries" ("state", "next_attempt_at")',
      );
      await queryRunner.query(
        `CREATE TABLE "webhook_attempts" (
          "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
          "delivery_id" INTEGER NOT NULL,
          "webhook_id" INTEGER NOT NULL,
          "event_id" INTEGER NOT NULL,
          "attempt" INTEGER NOT NULL,
          "started_at" DATETIME NOT NULL,
          "status_code" INTEGER NULL,
          "error" VARCHAR(500) NULL,
          "duration_ms" INTEGER NOT NULL,
          "next_retry_at" DATETIME NULL
        )`,
      );
      await queryRunner.query(
        'CREATE INDEX "idx_webhook_attempts_webhook_id" ON "webhook_attempts" ("webhook_id", "id")',
      );
      await queryRunner.query(
        `CREATE TABLE "webhook_dispatch" (
          "id" INTEGER PRIMARY KEY NOT NULL,
          "dispatched_through" INTEGER NOT NULL
        )`,
      );
    }
    // Webhooks created from now on receive the events from now on: start after the newest one.
    await queryRunner.query(
      'INSERT INTO webhook_dispatch (id, dispatched_through) SELECT 1, last_position FROM event_sequence WHERE id = 1',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMysql(queryRunner) ? '`' : '"';
    for (const table of ['webhook_dispatch', 'webhook_attempts', 'webhook_deliveries', 'webhooks']) {
      await queryRunner.query(`DROP TABLE ${quote}${table}${quote}`);
    }
  }
}
