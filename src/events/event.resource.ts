import { ApiProperty } from '@nestjs/swagger';
import { ALL_EVENT_TYPES } from './event-types.js';

/** An event of the feed (contract §9), as GET /events serves it. */
export class EventResource {
  @ApiProperty({ example: '1042', description: 'Unique, increasing in feed order; the cursor to resume after it' })
  id: string;

  @ApiProperty({ enum: ALL_EVENT_TYPES, example: 'post.updated' })
  type: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T10:00:00.000Z' })
  occurredAt: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: {
      post: { id: 42, title: 'Hello', content: 'Body text', author: 'Ada', createdAt: '…', updatedAt: '…' },
      version: 3,
      principal: 'api-key:7',
    },
    description:
      'post: the post after the change (only its id for post.deleted); version: its version after the change ' +
      '(the number in its ETag; for post.deleted one more than the last); principal: who made the change',
  })
  data: Record<string, unknown>;
}
