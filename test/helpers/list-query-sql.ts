import { expect, vi } from 'vitest';
import { effectiveScopes, Scope, type Principal } from '../../src/auth/principal.js';
import type { PageQuery } from '../../src/posts/dto/list-posts-query.dto.js';
import { PostsRepository } from '../../src/posts/posts.repository.js';
import { PostsService, type PostsPage } from '../../src/posts/posts.service.js';
import type { TestApp } from './test-app.js';

export interface ListSql {
  page: PostsPage;
  sql: string;
  parameters: unknown[];
}

/** A principal that may list everything: published posts are everyone's, drafts and scheduled posts an admin's too. */
export const LISTING_ADMIN: Principal = {
  id: 'api-key:listing-admin',
  kind: 'api-key',
  scopes: effectiveScopes([Scope.admin]),
};

/** Runs PostsService.findPage and returns its page and the SQL of the list query it ran. */
export async function captureListSql(
  testApp: TestApp,
  query: PageQuery,
  principal: Principal = LISTING_ADMIN,
): Promise<ListSql> {
  const repository = testApp.app.get(PostsRepository);
  const pageStatement = vi.spyOn(repository, 'pageStatement');
  try {
    const page = await testApp.app.get(PostsService).findPage(query, principal);
    expect(pageStatement).toHaveBeenCalledTimes(1);
    const { sql, parameters } = pageStatement.mock.results[0].value as { sql: string; parameters: unknown[] };
    return { page, sql, parameters };
  } finally {
    pageStatement.mockRestore();
  }
}

/** The page query `depth` posts into the listing, with the cursor a client would hold there (0: the first page). */
export async function pageQueryAt(testApp: TestApp, query: PageQuery, depth: number): Promise<PageQuery> {
  if (depth === 0) return query;
  // One page of `depth` posts ends where a client paging through them would be.
  const { nextCursor } = await testApp.app.get(PostsService).findPage({ ...query, limit: depth }, LISTING_ADMIN);
  expect(nextCursor).toBeDefined();
  return { ...query, cursor: nextCursor };
}
