import { ApiProperty } from '@nestjs/swagger';
import { PostStatuses, type Post, type PostStatus } from './post.entity.js';
import type { PostRevision } from './post-revision.entity.js';
import type { TrashedPost } from './trashed-post.entity.js';

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

  @ApiProperty({ enum: PostStatuses, example: 'published', description: 'As of the response (contract §10)' })
  status: PostStatus;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    example: '2026-11-22T10:00:00.000Z',
    description: 'null for a draft',
  })
  publishedAt: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-22T10:00:00.000Z' })
  updatedAt: string;
}

/** A post in the trash: the post as it was, and when it was deleted. */
export class TrashedPostResource extends PostResource {
  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  deletedAt: string;
}

/** A state a replace, patch or restore replaced. */
export class PostRevisionResource {
  @ApiProperty({ example: 3, description: "The post's version in this state (the number in its ETag then)" })
  version: number;

  @ApiProperty({ example: 'Hello' })
  title: string;

  @ApiProperty({ example: 'Body text' })
  content: string;

  @ApiProperty({ example: 'Ada' })
  author: string;

  @ApiProperty({ enum: PostStatuses, example: 'published' })
  status: PostStatus;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-11-22T10:00:00.000Z' })
  publishedAt: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z', description: 'When it was replaced' })
  revisedAt: string;
}

/** `post` as of the read: PostsRepository hands out posts already as of now (postAsOf). */
export function toPostResource(post: Post | TrashedPost): PostResource {
  return {
    id: post.id,
    title: post.title,
    content: post.content,
    author: post.author,
    status: post.status,
    publishedAt: post.publishedAt === null ? null : post.publishedAt.toISOString(),
    createdAt: post.createdAt.toISOString(),
    updatedAt: post.updatedAt.toISOString(),
  };
}

export function toTrashedPostResource(post: TrashedPost): TrashedPostResource {
  return { ...toPostResource(post), deletedAt: post.deletedAt.toISOString() };
}

export function toPostRevisionResource(revision: PostRevision): PostRevisionResource {
  return {
    version: revision.version,
    title: revision.title,
    content: revision.content,
    author: revision.author,
    status: revision.status,
    publishedAt: revision.publishedAt === null ? null : revision.publishedAt.toISOString(),
    revisedAt: revision.revisedAt.toISOString(),
  };
}
