// @module-tag database
// (builds the SQL texts from the service's own data source)
import { describe, expect, it } from 'vitest';
import * as mysqlBaseline from '../bench/baselines/mysql-store.js';
import * as sqliteBaseline from '../bench/baselines/sqlite-store.js';
import { EntityRows } from '../src/database/entity-rows.js';
import { Post } from '../src/posts/post.entity.js';
import { dialect } from './helpers/test-database.js';
import { useTestApp } from './helpers/use-test-app.js';

// The benchmark compares the service with raw servers "doing the same SQL" (BENCHMARKS.md): their
// statements are written out by hand, so this keeps them the service's when either changes.
describe('the benchmark baselines (B0, B0s)', () => {
  const context = useTestApp();

  it(`send the service's SELECT and INSERT texts for GET /posts/:id and POST /posts on ${dialect}`, () => {
    const rows = new EntityRows(context.app.dataSource.getRepository(Post));
    const baseline = dialect === 'mysql' ? mysqlBaseline : sqliteBaseline;

    expect({ selectById: baseline.SELECT_BY_ID, insert: baseline.INSERT }).toEqual({
      selectById: rows.selectByPrimaryKey,
      insert: rows.insertRow,
    });
  });
});
