import type { Principal } from '../auth/principal.js';
import { EventTypes, type NewEvent } from '../events/event-types.js';
import type { Post } from './post.entity.js';
import { toPostResource } from './post.resource.js';

/** The event of a create or an update: the post as GET shows it after the change, and its version. */
export function postWritten(type: 'created' | 'updated', post: Post, principal: Principal): NewEvent {
  return {
    type: type === 'created' ? EventTypes.postCreated : EventTypes.postUpdated,
    postId: post.id,
    occurredAt: post.updatedAt,
    data: { post: toPostResource(post), version: post.version, principal: principal.id },
  };
}

/**
 * The tombstone of a delete: the id only. Its version is one more than the deleted post's last, so
 * a receiver that keeps the highest version per post lets the delete win over any update.
 */
export function postDeleted(id: number, lastVersion: number, principal: Principal): NewEvent {
  return {
    type: EventTypes.postDeleted,
    postId: id,
    occurredAt: new Date(),
    data: { post: { id }, version: lastVersion + 1, principal: principal.id },
  };
}
