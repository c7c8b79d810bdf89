/**
 * The event types of contracts §9 and §10. One event per change, named after what the change did:
 * `post.updated` for a PUT or PATCH that neither publishes nor takes back to draft, `post.published`
 * when a post becomes published (by a write, or when its scheduled instant passes), `post.unpublished`
 * when it goes back to draft, `post.deleted` when it moves to the trash, `post.restored` when it comes
 * back, `post.purged` when it is erased (a tombstone, like `post.deleted`).
 */
export const EventTypes = {
  postCreated: 'post.created',
  postUpdated: 'post.updated',
  postPublished: 'post.published',
  postUnpublished: 'post.unpublished',
  postDeleted: 'post.deleted',
  postRestored: 'post.restored',
  postPurged: 'post.purged',
} as const;

export type EventType = (typeof EventTypes)[keyof typeof EventTypes];

export const ALL_EVENT_TYPES: readonly EventType[] = Object.values(EventTypes);

export function isEventType(value: string): value is EventType {
  return (ALL_EVENT_TYPES as readonly string[]).includes(value);
}

/** What a writer appends: the feed gives it its id (the position) once its transaction has committed. */
export interface NewEvent {
  type: EventType;
  postId: number;
  occurredAt: Date;
  /** The event's `data`; it must carry no token and no secret. */
  data: Record<string, unknown>;
}

/**
 * The event of a row inserted in the same statement batch, whose id the database assigns there: its
 * `data` as JSON text on either side of that id (EventsRepository.insertWithEvent).
 */
export interface NewEventOfInsert {
  type: EventType;
  occurredAt: Date;
  dataAroundId: [before: string, after: string];
}

/** An event as the feed serves it. */
export interface FeedEvent {
  /** The position in the feed, as a string: the cursor to resume after it. */
  id: string;
  type: EventType;
  occurredAt: string;
  data: Record<string, unknown>;
}
