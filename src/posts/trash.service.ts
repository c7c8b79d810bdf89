import { Inject, Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isAdmin, type Principal } from '../auth/principal.js';
import type { CursorCodec } from '../common/pagination/cursor-codec.js';
import { POSTS_CONFIG, type PostsConfig } from '../config/config.module.js';
import { inRetriedTransaction } from '../database/deadlock-retry.js';
import { EventTypes } from '../events/event-types.js';
import { EventsService } from '../events/events.service.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import type { Post } from './post.entity.js';
import { postChanged, postTombstone, SYSTEM_ACTOR } from './post-events.js';
import { mayChange } from './post-lifecycle.js';
import { PostPublication } from './post-publication.js';
import { PostRevisionsRepository } from './post-revisions.repository.js';
import { PostsRepository } from './posts.repository.js';
import { PostsTrashRepository } from './posts-trash.repository.js';
import { decodePageCursor, keysetPage } from './page-cursor.js';
import { POSTS_CURSOR_CODEC } from './posts.tokens.js';
import type { TrashedPost } from './trashed-post.entity.js';

export interface TrashPage {
  posts: TrashedPost[];
  nextCursor?: string;
}

/**
 * The trash of contract §10: deleted posts, their owner's (all of them for an admin), until they are
 * restored or erased, by hand or after TRASH_RETENTION. Someone else's trashed post is 404, as a
 * draft is: its existence is not revealed.
 */
@Injectable()
export class TrashService {
  constructor(
    private readonly trash: PostsTrashRepository,
    private readonly posts: PostsRepository,
    private readonly publication: PostPublication,
    private readonly revisions: PostRevisionsRepository,
    private readonly events: EventsService,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(POSTS_CURSOR_CODEC) private readonly cursorCodec: CursorCodec,
    @Inject(POSTS_CONFIG) private readonly config: PostsConfig,
  ) {}

  async findPage(query: { limit: number; cursor?: string }, principal: Principal): Promise<TrashPage> {
    const scope = JSON.stringify(['trash']);
    const before = query.cursor === undefined ? undefined : decodePageCursor(this.cursorCodec, query.cursor, scope);
    const ownerId = isAdmin(principal) ? undefined : principal.id;
    const rows = await this.trash.findPage(ownerId, before, query.limit + 1);
    const { items, nextCursor } = keysetPage(this.cursorCodec, rows, query.limit, scope, (post) => post.id);
    return { posts: items, nextCursor };
  }

  /**
   * Brings the post back under its id, as a new version, with the state it had. A scheduled post
   * whose instant passed in the trash is published right after, with its own event and version.
   */
  async restore(id: number, principal: Principal): Promise<Post> {
    return inRetriedTransaction(this.txHost, async () => {
      await this.lockOwn(id, principal);
      const now = new Date();
      await this.trash.restore(id, now);
      const restored = (await this.posts.lockById(id))!;
      await this.events.append(postChanged(EventTypes.postRestored, restored, principal.id, now));
      return this.publication.publishIfDue(restored, now);
    });
  }

  /** Erases the post and its revisions for good; its last event is a tombstone. */
  async purge(id: number, principal: Principal): Promise<void> {
    await inRetriedTransaction(this.txHost, async () => {
      const post = await this.lockOwn(id, principal);
      await this.erase(post, principal.id, new Date());
    });
  }

  /**
   * Erases the posts trashed before `cutoff` (TRASH_RETENTION), up to `batch` of them, each in its
   * own transaction; a post another instance erased first is skipped, so each gets one tombstone.
   * Returns how many it erased.
   */
  async purgeDeletedBefore(cutoff: Date, batch: number): Promise<number> {
    let purged = 0;
    for (const id of await this.trash.findDeletedBefore(cutoff, batch)) {
      await inRetriedTransaction(this.txHost, async () => {
        const post = await this.trash.lockById(id);
        if (post === undefined || post.deletedAt.getTime() >= cutoff.getTime()) return;
        await this.erase(post, SYSTEM_ACTOR, new Date());
        purged++;
      });
    }
    return purged;
  }

  get retentionMs(): number {
    return this.config.trashRetentionMs;
  }

  private async erase(post: TrashedPost, actor: string, now: Date): Promise<void> {
    await this.revisions.deleteAll(post.id);
    if (!(await this.trash.remove(post.id))) return;
    await this.events.append(postTombstone(EventTypes.postPurged, post.id, post.version, actor, now));
  }

  private async lockOwn(id: number, principal: Principal): Promise<TrashedPost> {
    const post = await this.trash.lockById(id);
    if (post === undefined || !mayChange(post, principal)) {
      throw new ProblemException(ProblemTypes.notFound, `Post ${id} is not in your trash.`);
    }
    return post;
  }
}
