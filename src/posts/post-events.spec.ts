import { describe, expect, it } from 'vitest';
import { EventTypes } from '../events/event-types.js';
import { Post } from './post.entity.js';
import { postChanged, postCreatedAroundId } from './post-events.js';

function post(id: number): Post {
  const at = new Date('2026-11-24T10:00:00.000Z');
  return Object.assign(new Post(), {
    id,
    title: 'A "quoted" title',
    content: 'id 0, "id":0, {"post":{"id":0,',
    author: 'Ada',
    ownerId: 'api-key:7',
    version: 1,
    status: 'published',
    publishedAt: at,
    createdAt: at,
    updatedAt: at,
  });
}

describe('postCreatedAroundId', () => {
  const actor = 'api-key:7';

  it('splits the data of the create event where the id goes: joined around an id, it is that event', () => {
    const { type, occurredAt, dataAroundId } = postCreatedAroundId(post(0), actor);
    const expected = postChanged(EventTypes.postCreated, post(9_007_199_254_740_991), actor);

    expect(dataAroundId.join('9007199254740991')).toBe(JSON.stringify(expected.data));
    expect(dataAroundId[0]).toBe('{"post":{"id":');
    expect([type, occurredAt]).toEqual([expected.type, expected.occurredAt]);
  });

  it('ignores the id of the post it is given: the database assigns it', () => {
    expect(postCreatedAroundId(post(42), actor)).toEqual(postCreatedAroundId(post(0), actor));
  });
});
