/** The event types of contract §9; `post.updated` stands for both PUT and PATCH. */
export const EventTypes = {
  postCreated: 'post.created',
  postUpdated: 'post.updated',
  postDeleted: 'post.deleted',
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
