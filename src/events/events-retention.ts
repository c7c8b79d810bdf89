import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EVENTS_CONFIG, type EventsConfig } from '../config/config.module.js';
import { EventsRepository } from './events.repository.js';

const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
const BATCH = 1_000;
// One sweep removes at most this many batches, so a large backlog is worked off over several sweeps.
const BATCHES_PER_SWEEP = 100;

/**
 * Removes events older than EVENTS_RETENTION (30 days by default), in batches, on every instance
 * every 10 minutes (the deletes are idempotent, so instances may overlap). Cursors before what was
 * removed are then 410 (EventsService).
 */
@Injectable()
export class EventsRetention implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Events');
  private timer?: NodeJS.Timeout;
  private sweeping: Promise<number> | undefined;

  constructor(
    private readonly events: EventsRepository,
    @Inject(EVENTS_CONFIG) private readonly config: EventsConfig,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** One sweep; returns how many events it removed (tests call it directly). */
  sweep(now = new Date()): Promise<number> {
    this.sweeping ??= this.removeExpired(now).finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private async removeExpired(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.retentionMs);
    let removed = 0;
    try {
      for (let batch = 0; batch < BATCHES_PER_SWEEP; batch++) {
        const count = await this.events.purgeBefore(cutoff, BATCH);
        removed += count;
        if (count < BATCH) break;
      }
    } catch (error) {
      this.logger.warn(`removing expired events failed; the next sweep retries: ${(error as Error).message}`);
    }
    return removed;
  }
}
