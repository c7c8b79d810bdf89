import { isAdmin, type Principal } from '../auth/principal.js';
import { parseDateTime } from '../common/validation/date-time.js';
import { EventTypes, type EventType } from '../events/event-types.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import type { Post, PostStatus } from './post.entity.js';

/** What a client may send about a post's state: absent members keep the post's current state. */
export interface LifecycleInput {
  status?: PostStatus;
  /** An RFC 3339 date-time (validated by the DTO), or null (a draft's). */
  publishedAt?: string | null;
}

export type Lifecycle = Pick<Post, 'status' | 'publishedAt'>;

/**
 * The post as it is at `now` (contract §10): a scheduled post whose instant has passed *is*
 * published, before the publication sweep has stored it. It shows the version the sweep will give
 * it, so its ETag changes with its representation, and a write first stores the publication
 * (PostsService), after which that ETag matches.
 */
export function postAsOf<T extends Lifecycle & { version: number }>(post: T, now: Date): T {
  if (!isDue(post, now)) return post;
  return { ...post, status: 'published', version: post.version + 1 };
}

export function isDue(post: Lifecycle, now: Date): boolean {
  return post.status === 'scheduled' && post.publishedAt !== null && post.publishedAt.getTime() <= now.getTime();
}

/** Drafts and not-yet-due scheduled posts are their owner's and admins' only (the post as of now). */
export function mayRead(post: Pick<Post, 'status' | 'ownerId'>, principal: Principal): boolean {
  return post.status === 'published' || mayChange(post, principal);
}

export function mayChange(post: Pick<Post, 'ownerId'>, principal: Principal): boolean {
  return isAdmin(principal) || post.ownerId === principal.id;
}

/**
 * The state a create (current undefined), replace or patch leads to, by the rules of contract §10:
 * - draft: publishedAt is null;
 * - published: publishedAt defaults to the current one (if already published) or now; a future one is 400;
 * - scheduled: publishedAt is required (unless the post is already scheduled) and must be in the future.
 * Without `status` the post keeps its state (a create's is published); a publishedAt alone then
 * reschedules or backdates within that state.
 */
export function resolveLifecycle(input: LifecycleInput, current: Lifecycle | undefined, now: Date): Lifecycle {
  const status = input.status ?? current?.status ?? 'published';
  const given = input.publishedAt === undefined || input.publishedAt === null ? input.publishedAt : instant(input);
  const kept = current?.status === status ? current.publishedAt : undefined;
  switch (status) {
    case 'draft':
      if (given != null) {
        throw invalid('a draft has no publishedAt: send null or leave it out, or send status scheduled or published');
      }
      return { status, publishedAt: null };
    case 'published': {
      if (given === null) throw invalid('a published post has a publishedAt: leave it out to publish now');
      const publishedAt = given ?? kept ?? now;
      if (publishedAt.getTime() > now.getTime()) {
        throw invalid(
          'publishedAt of a published post cannot be in the future: send status scheduled to publish later',
        );
      }
      return { status, publishedAt };
    }
    case 'scheduled': {
      if (given === null) throw invalid('a scheduled post needs publishedAt: the future instant it is published at');
      const publishedAt = given ?? kept;
      if (publishedAt == null) throw invalid('status scheduled needs publishedAt: the future instant to publish at');
      if (publishedAt.getTime() <= now.getTime()) {
        throw invalid(
          'publishedAt of a scheduled post must be in the future: send status published for a past instant',
        );
      }
      return { status, publishedAt };
    }
  }
}

/** The type of the event of a replace, patch or restore that took a post from `before` to `after`. */
export function changeEventType(before: PostStatus, after: PostStatus): EventType {
  if (before !== 'published' && after === 'published') return EventTypes.postPublished;
  if (before !== 'draft' && after === 'draft') return EventTypes.postUnpublished;
  return EventTypes.postUpdated;
}

function instant(input: LifecycleInput): Date {
  const date = parseDateTime(input.publishedAt!);
  if (date === null) throw invalid('publishedAt must be an RFC 3339 date-time such as 2030-01-31T12:00:00Z');
  return date;
}

function invalid(detail: string): ProblemException {
  return new ProblemException(ProblemTypes.validationFailed, `The post's state is not valid: ${detail}.`, {
    errors: [{ pointer: '/publishedAt', detail }],
  });
}
