import { ApiProperty } from '@nestjs/swagger';
import type { Post } from './post.entity.js';

/** The representation of a post on the wire: exactly these fields, whatever the entity gains later. */
export class PostResource {
  @ApiProperty({ example: 42, description: 'Positive integer, at most 2^53 - 1' })
  id: number;

  @ApiProperty({ example: 'Hello' })
  title: string;

  @ApiProperty({ example: 'Body text' })
  content: string;

  @ApiProperty({ example: 'Ada' })
  author: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:00:00.000Z' })
  updatedAt: string;
}

export function toPostResource(post: Post): PostResource {
  return {
    id: post.id,
    title: post.title,
    content: post.content,
    author: post.author,
    createdAt: post.createdAt.toISOString(),
    updatedAt: post.updatedAt.toISOString(),
  };
}
