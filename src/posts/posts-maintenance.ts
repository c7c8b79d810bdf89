import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PostPublication } from './post-publication.js';
import { TrashService } from './trash.service.js';

// Scheduled posts are published within about this long of their instant (contract §10: "within seconds").
const PUBLICATION_INTERVAL_MS = 1_000;
const TRASH_INTERVAL_MS = 10 * 60 * 1000;
// A trash run that stopped at its budget with posts left: the next one comes this soon instead.
const TRASH_BACKLOG_INTERVAL_MS = 10 * 1000;
// Posts per batch: each post is its own transaction, a batch one read of the due ones.
const BATCH = 100;
// How long a run may keep taking batches: a backlog (thousands of posts scheduled for one instant,
// a day of mass deletes) is worked off at the database's pace, not a fixed number per run, while a
// run still ends before the next is due and never holds the database for long.
const PUBLICATION_BUDGET_MS = 800;
const TRASH_BUDGET_MS = 5_000;

/**
 * The posts' background work, on every instance: the publication sweep (a scheduled post's
 * `post.published` event, once per post in a fleet: PostPublication.publishDue) and the trash's
 * retention (TrashService.purgeDeletedBefore). A run never overlaps the previous one; a failed run
 * is logged and the next one retries.
 */
@Injectable()
export class PostsMaintenance implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Posts');
  private publicationTimer?: NodeJS.Timeout;
  private trashTimer?: NodeJS.Timeout;
  private stopped = false;
  private publishing: Promise<number> | undefined;
  private purging: Promise<number> | undefined;
  private trashBacklog = false;
  /** How long a run may keep taking batches (a test may lengthen them, to count without a clock). */
  readonly budgetsMs = { publication: PUBLICATION_BUDGET_MS, trash: TRASH_BUDGET_MS };

  constructor(
    private readonly publication: PostPublication,
    private readonly trash: TrashService,
  ) {}

  onModuleInit(): void {
    this.publicationTimer = setInterval(() => void this.publishDue(), PUBLICATION_INTERVAL_MS).unref();
    this.scheduleTrash(TRASH_INTERVAL_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.publicationTimer);
    clearTimeout(this.trashTimer);
    await Promise.all([this.publishing, this.purging]);
  }

  /** One publication run; returns how many posts it published (tests call it directly). */
  publishDue(now = new Date()): Promise<number> {
    this.publishing ??= this.inBatches('publishing scheduled posts', this.budgetsMs.publication, () =>
      this.publication.publishDue(now, BATCH),
    )
      .then(({ done }) => done)
      .finally(() => (this.publishing = undefined));
    return this.publishing;
  }

  /** One trash run; returns how many trashed posts it erased (tests call it directly). */
  purgeTrash(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.trash.retentionMs);
    this.purging ??= this.inBatches('erasing expired trash', this.budgetsMs.trash, () =>
      this.trash.purgeDeletedBefore(cutoff, BATCH),
    )
      .then(({ done, backlog }) => {
        this.trashBacklog = backlog;
        return done;
      })
      .finally(() => (this.purging = undefined));
    return this.purging;
  }

  private scheduleTrash(delayMs: number): void {
    if (this.stopped) return;
    this.trashTimer = setTimeout(() => {
      void this.purgeTrash().finally(() =>
        this.scheduleTrash(this.trashBacklog ? TRASH_BACKLOG_INTERVAL_MS : TRASH_INTERVAL_MS),
      );
    }, delayMs).unref();
  }

  /** Batches until one comes back short (nothing left) or the budget is spent (`backlog`: maybe more). */
  private async inBatches(
    what: string,
    budgetMs: number,
    batch: () => Promise<number>,
  ): Promise<{ done: number; backlog: boolean }> {
    const deadline = Date.now() + budgetMs;
    let done = 0;
    try {
      for (;;) {
        const count = await batch();
        done += count;
        if (count < BATCH) return { done, backlog: false };
        if (Date.now() >= deadline || this.stopped) return { done, backlog: true };
      }
    } catch (error) {
      this.logger.warn(`${what} failed; the next run retries: ${(error as Error).message}`);
      return { done, backlog: false };
    }
  }
}
