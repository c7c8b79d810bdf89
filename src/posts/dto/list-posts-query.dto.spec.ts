import { describe, expect, it } from 'vitest';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, toPageQuery, type ListPostsQueryDto } from './list-posts-query.dto.js';

describe('toPageQuery', () => {
  it('uses a limit of 20, descending order, published posts and no count when nothing is given', () => {
    const query: ListPostsQueryDto = {};

    const page = toPageQuery(query);

    expect(page).toEqual({
      limit: 20,
      order: 'desc',
      author: undefined,
      status: 'published',
      cursor: undefined,
      count: false,
    });
    expect(DEFAULT_PAGE_SIZE).toBe(20);
    expect(MAX_PAGE_SIZE).toBe(100);
  });

  it.each([
    ['1', 1],
    ['5', 5],
    ['99', 99],
    ['100', 100],
    ['101', 100],
    ['999', 100],
    ['1000', 100],
    ['0005', 5],
    ['000100', 100],
    ['0000000000000000000000000000007', 7],
    ['9'.repeat(30), 100],
    ['1' + '0'.repeat(29), 100],
  ])('reads limit %s as %i', (limit, expected) => {
    const page = toPageQuery({ limit });

    expect(page.limit).toBe(expected);
  });

  it.each([
    ['asc', 'asc'],
    ['desc', 'desc'],
  ])('reads order %s as %s', (order, expected) => {
    const page = toPageQuery({ order });

    expect(page.order).toBe(expected);
  });

  it.each([
    ['true', true],
    ['false', false],
  ])('reads count %s as %s', (count, expected) => {
    const page = toPageQuery({ count });

    expect(page.count).toBe(expected);
  });

  it('passes the author and the cursor through unchanged', () => {
    const page = toPageQuery({ author: 'Zoë', cursor: 'abc.def' });

    expect(page).toMatchObject({ author: 'Zoë', cursor: 'abc.def' });
  });
});
