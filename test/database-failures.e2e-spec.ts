// @module-tag database
// (breaks the database under the service)
import { describe, expect, it } from 'vitest';
import { buildPost } from './factories/post.factory.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

// What a 500 must never show a client: SQL, table and column names, driver names, stack frames, paths.
const INTERNALS =
  /SELECT|INSERT|posts`|"posts"|no such table|ER_|SQLITE|mysql|typeorm|QueryFailedError|at .*\(|\/work\/|node_modules|\.ts:/i;

describe('when a query fails for a reason that is not the client’s', () => {
  const context = useTestApp();
  const { api } = context;

  it('answers 500 internal-error with a request id and nothing internal', async () => {
    const created = await api.post<{ id: number }>('/posts', buildPost());
    // Break the schema under the running service: every query on posts now fails inside the driver.
    await context.app.dataSource.query('DROP TABLE posts');

    const responses = await Promise.all([
      api.get('/posts'),
      api.get(`/posts/${created.body.id}`),
      api.post('/posts', buildPost()),
      api.patch(`/posts/${created.body.id}`, { title: 'x' }),
      api.delete(`/posts/${created.body.id}`),
    ]);

    for (const response of responses) {
      const problem = expectProblem(response, 500, 'internal-error');
      expect(problem.title).toBe('Internal server error');
      expect(problem.detail).toContain('requestId');
      expect(response.text).not.toMatch(INTERNALS);
      expect(Object.keys(problem).sort()).toEqual(['detail', 'instance', 'requestId', 'status', 'title', 'type']);
    }
  });
});
