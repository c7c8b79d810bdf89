import type { DataSource } from 'typeorm';
import { Post } from '../../src/posts/post.entity.js';
import type { PostInput } from './post.factory.js';

/** Rows per INSERT statement, well below the bound-parameter limits of SQLite and MySQL. */
const CHUNK_SIZE = 500;

/** `author-00`, `author-01`, …: the name of the author number `index` of a seeded table. */
export const authorName = (index: number) => `author-${String(index).padStart(2, '0')}`;

/** `authors × postsPerAuthor` posts, authors interleaved, as if they all wrote at the same time. */
export function interleavedAuthors(options: { authors: number; postsPerAuthor: number }): PostInput[] {
  return Array.from({ length: options.authors * options.postsPerAuthor }, (_, index) => ({
    title: `Post ${index}`,
    content: `Content of post ${index}`,
    author: authorName(index % options.authors),
  }));
}

/**
 * Inserts the posts straight into the table, in chunks of 500 rows, all created and updated now,
 * published now unless a row says otherwise.
 */
export async function seedPosts(
  dataSource: DataSource,
  posts: Array<PostInput & Partial<Pick<Post, 'status' | 'publishedAt' | 'ownerId'>>>,
): Promise<void> {
  const repository = dataSource.getRepository(Post);
  const now = new Date();
  const rows = posts.map((post) => ({
    status: 'published' as const,
    publishedAt: post.status === 'draft' ? null : now,
    ...post,
    createdAt: now,
    updatedAt: now,
  }));
  for (let start = 0; start < rows.length; start += CHUNK_SIZE) {
    await repository.insert(rows.slice(start, start + CHUNK_SIZE));
  }
}
