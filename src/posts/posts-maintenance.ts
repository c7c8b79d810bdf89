import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PostPublication } from './post-publication.js';
import { TrashService } from './trash.service.js';

// Scheduled posts are published within this long of their instant (contract §10: "within seconds").
const PUBLICATION_INTERVAL_MS = 1_000;
const TRASH_INTERVAL_MS = 10 * 60 * 1000;
// Each run handles at most this many posts, so a backlog is worked off over several runs and no run
// holds the database for long.
const BATCH = 100;
const TRASH_BATCHES_PER_RUN = 10;

/**
 * The posts' background work, on every instance: the publication sweep (a scheduled post's
 * `post.published` event, once per post in a fleet: PostPublication.publishDue) and the trash's
 * retention (TrashService.purgeDeletedBefore). A run never overlaps the previous one; a failed run
 * is logged and the next one retries.
 */
@Injectable()
export class PostsMaintenance implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Posts');
  private readonly timers: NodeJS.Timeout[] = [];
  private publishing: Promise<number> | undefined;
  private purging: Promise<number> | undefined;

  constructor(
    private readonly publication: PostPublication,
    private readonly trash: TrashService,
  ) {}

  onModuleInit(): void {
    this.timers.push(
      setInterval(() => void this.publishDue(), PUBLICATION_INTERVAL_MS).unref(),
      setInterval(() => void this.purgeTrash(), TRASH_INTERVAL_MS).unref(),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.timers.forEach((timer) => clearInterval(timer));
    await Promise.all([this.publishing, this.purging]);
  }

  /** One publication run; returns how many posts it published (tests call it directly). */
  publishDue(now = new Date()): Promise<number> {
    this.publishing ??= this.logFailure('publishing scheduled posts', () =>
      this.publication.publishDue(now, BATCH),
    ).finally(() => (this.publishing = undefined));
    return this.publishing;
  }

  /** One trash run; returns how many trashed posts it erased (tests call it directly). */
  purgeTrash(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.trash.retentionMs);
    this.purging ??= this.logFailure('erasing expired trash', async () => {
      let purged = 0;
      for (let batch = 0; batch < TRASH_BATCHES_PER_RUN; batch++) {
        const count = await this.trash.purgeDeletedBefore(cutoff, BATCH);
        purged += count;
        if (count < BATCH) break;
      }
      return purged;
    }).finally(() => (this.purging = undefined));
    return this.purging;
  }

  private async logFailure(what: string, run: () => Promise<number>): Promise<number> {
    try {
      return await run();
    } catch (error) {
      this.logger.warn(`${what} failed; the next run retries: ${(error as Error).message}`);
      return 0;
    }
  }
}
