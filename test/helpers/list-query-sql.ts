import { getRepositoryToken } from '@nestjs/typeorm';
import type { Repository, SelectQueryBuilder } from 'typeorm';
import { expect, vi } from 'vitest';
import type { PageQuery } from '../../src/posts/dto/list-posts-query.dto.js';
import { Post } from '../../src/posts/post.entity.js';
import { PostsService, type PostsPage } from '../../src/posts/posts.service.js';
import type { TestApp } from './test-app.js';

export interface ListSql {
  page: PostsPage;
  sql: string;
  parameters: unknown[];
}

/** Runs PostsService.findPage and returns its page and the SQL of the list query it built. */
export async function captureListSql(testApp: TestApp, query: PageQuery): Promise<ListSql> {
  const repository = testApp.app.get<Repository<Post>>(getRepositoryToken(Post));
  const createQueryBuilder = vi.spyOn(repository, 'createQueryBuilder');
  try {
    const page = await testApp.app.get(PostsService).findPage(query);
    expect(createQueryBuilder).toHaveBeenCalledTimes(1);
    const builder = createQueryBuilder.mock.results[0].value as SelectQueryBuilder<Post>;
    const [sql, parameters] = builder.getQueryAndParameters();
    return { page, sql, parameters };
  } finally {
    createQueryBuilder.mockRestore();
  }
}

/** The page query `depth` posts into the listing, with the cursor a client would hold there (0: the first page). */
export async function pageQueryAt(testApp: TestApp, query: PageQuery, depth: number): Promise<PageQuery> {
  if (depth === 0) return query;
  // One page of `depth` posts ends where a client paging through them would be.
  const { nextCursor } = await testApp.app.get(PostsService).findPage({ ...query, limit: depth });
  expect(nextCursor).toBeDefined();
  return { ...query, cursor: nextCursor };
}
