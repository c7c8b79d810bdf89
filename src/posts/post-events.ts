import type { Principal } from '../auth/principal.js';
import { EventTypes, type NewEvent, type NewEventOfInsert } from '../events/event-types.js';
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

// How the JSON of a post's event begins: the post's id is the first thing in it.
const DATA_BEFORE_ID = '{"post":{"id":';

/**
 * The event of a create whose post's id the database assigns in the same statement batch: the JSON
 * of postWritten()'s `data` split where the id goes.
 */
export function postCreatedAroundId(post: Post, principal: Principal): NewEventOfInsert {
  const event = postWritten('created', { ...post, id: 0 }, principal);
  const json = JSON.stringify(event.data);
  if (!json.startsWith(`${DATA_BEFORE_ID}0,`)) throw new Error(`a post event's data must begin with ${DATA_BEFORE_ID}`);
  return {
    type: event.type,
    occurredAt: event.occurredAt,
    dataAroundId: [DATA_BEFORE_ID, json.slice(DATA_BEFORE_ID.length + 1)],
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
