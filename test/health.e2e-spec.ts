import { describe, expect, it } from 'vitest';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

describe('health probes', () => {
  const context = useTestApp();
  const anonymous = context.api.as(null);

  it('answers /health/live without credentials', async () => {
    const response = await anonymous.get('/health/live');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok' });
  });

  it('answers /health/ready without credentials while the database is reachable', async () => {
    const response = await anonymous.get('/health/ready');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok', details: { database: { status: 'up' } } });
  });

  it('ignores credentials on public routes, even invalid ones', async () => {
    expect((await context.api.as('psk_not-a-real-key').get('/health/live')).status).toBe(200);
  });

  it('keeps every other route protected', async () => {
    expectProblem(await anonymous.get('/posts'), 401, 'unauthorized');
    expectProblem(await anonymous.get('/api-keys'), 401, 'unauthorized');
  });

  it('answers /health/ready with 503 and Retry-After once the database is gone', { tags: ['database'] }, async () => {
    await context.app.dataSource.destroy();
    const response = await anonymous.get('/health/ready');
    const problem = expectProblem(response, 503, 'service-unavailable');
    expect(problem.detail).toContain('database: down');
    expect(response.headers.get('retry-after')).toBe('5');
    expect((await anonymous.get('/health/live')).status).toBe(200);
  });
});
