import { describe, expect, it } from 'vitest';
import { insertedId } from './entity-rows.js';

describe('insertedId', () => {
  it.each([
    ['mysql2 ResultSetHeader', { insertId: 42, affectedRows: 1 }, 42],
    ['better-sqlite3 lastInsertRowid (number)', 7, 7],
    ['better-sqlite3 lastInsertRowid (bigint)', 9_007_199_254_740_991n, 9_007_199_254_740_991],
  ])('reads the id from %s', (_driver, raw, expected) => {
    expect(insertedId(raw)).toBe(expected);
  });

  it.each([undefined, null, 'abc', { affectedRows: 1 }])('throws when the driver reported no id (%s)', (raw) => {
    expect(() => insertedId(raw)).toThrow(/no inserted id/);
  });
});
