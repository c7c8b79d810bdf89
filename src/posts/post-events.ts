import { EventTypes, type EventType, type NewEvent, type NewEventOfInsert } from '../events/event-types.js';
import type { Post } from './post.entity.js';
import { toPostResource } from './post.resource.js';

/** Who made a change the service made by itself (a scheduled publication, the trash's retention). */
export const SYSTEM_ACTOR = 'system';

/** The event of a change that leaves a post in place: the post as GET shows it after the change, and its version. */
export function postChanged(type: EventType, post: Post, actor: string, occurredAt = post.updatedAt): NewEvent {
  return {
    type,
    postId: post.id,
    occurredAt,
    data: { post: toPostResource(post), version: post.version, principal: actor },
  };
}

// How the JSON of a post's event begins: the post's id is the first thing in it.
const DATA_BEFORE_ID = '{"post":{"id":';

/**
 * The event of a create whose post's id the database assigns in the same statement batch: the JSON
 * of postChanged()'s `data` split where the id goes.
 */
export function postCreatedAroundId(post: Post, actor: string): NewEventOfInsert {
  const event = postChanged(EventTypes.postCreated, { ...post, id: 0 }, actor);
  const json = JSON.stringify(event.data);
  if (!json.startsWith(`${DATA_BEFORE_ID}0,`)) throw new Error(`a post event's data must begin with ${DATA_BEFORE_ID}`);
  return {
    type: event.type,
    occurredAt: event.occurredAt,
    dataAroundId: [DATA_BEFORE_ID, json.slice(DATA_BEFORE_ID.length + 1)],
  };
}

/**
 * The tombstone of a delete (to the trash) or a purge: the id only. Its version is one more than the
 * post's last, so a receiver that keeps the highest version per post lets it win over any update.
 */
export function postTombstone(
  type: typeof EventTypes.postDeleted | typeof EventTypes.postPurged,
  id: number,
  lastVersion: number,
  actor: string,
  occurredAt = new Date(),
): NewEvent {
  return { type, postId: id, occurredAt, data: { post: { id }, version: lastVersion + 1, principal: actor } };
}
