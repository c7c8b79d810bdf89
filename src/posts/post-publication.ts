import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { inRetriedTransaction } from '../database/deadlock-retry.js';
import { EventTypes } from '../events/event-types.js';
import { EventsService } from '../events/events.service.js';
import type { Post } from './post.entity.js';
import { postChanged, SYSTEM_ACTOR } from './post-events.js';
import { isDue, postAsOf } from './post-lifecycle.js';
import { PostsRepository } from './posts.repository.js';

/**
 * Stores the publication of scheduled posts whose instant has passed, each with its `post.published`
 * event: in the sweep (publishDue, on every instance), and before any change to a due post (so the
 * post a writer changes is the one GET showed, and its events keep their order). The conditional
 * UPDATE under the row's lock decides who stores it, so each post's event is written once in a fleet.
 */
@Injectable()
export class PostPublication {
  constructor(
    private readonly posts: PostsRepository,
    private readonly events: EventsService,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  /** `post` (locked by the caller's transaction), published with its event if it was due; else itself. */
  async publishIfDue(post: Post, now: Date): Promise<Post> {
    if (!isDue(post, now) || !(await this.posts.publishIfDue(post.id, now))) return post;
    const published = postAsOf(post, now);
    await this.events.append(postChanged(EventTypes.postPublished, published, SYSTEM_ACTOR, now));
    return published;
  }

  /** Publishes up to `batch` due posts, each in its own transaction; returns how many it published. */
  async publishDue(now: Date, batch: number): Promise<number> {
    let published = 0;
    for (const id of await this.posts.findDue(now, batch)) {
      await inRetriedTransaction(this.txHost, async () => {
        const post = await this.posts.lockById(id);
        if (post !== undefined && (await this.publishIfDue(post, now)) !== post) published++;
      });
    }
    return published;
  }
}
