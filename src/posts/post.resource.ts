import type { Post } from './post.entity.js';

/** The representation of a post on the wire: exactly these fields, whatever the entity gains later. */
export interface PostResource {
  id: number;
  title: string;
  content: string;
  author: string;
  createdAt: string;
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
