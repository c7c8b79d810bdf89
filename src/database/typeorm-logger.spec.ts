import { Logger } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TypeOrmNestLogger } from './typeorm-logger.js';

describe('TypeOrmNestLogger.logQueryError', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    [
      'MySQL',
      Object.assign(new Error("Duplicate entry 'api-key:1-secret-key' for key 'uq'"), { code: 'ER_DUP_ENTRY' }),
    ],
    ['SQLite', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })],
  ])('logs a %s duplicate at debug level, without the duplicated value', (_database, error) => {
    const error$ = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => {});
    const debug = vi.spyOn(Logger.prototype, 'debug').mockImplementation(() => {});

    new TypeOrmNestLogger().logQueryError(error, 'INSERT INTO idempotency_keys …');

    expect(error$).not.toHaveBeenCalled();
    expect(debug).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(debug.mock.calls[0])).not.toContain('secret-key');
  });

  it('logs any other failure at error level with its message', () => {
    const error$ = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => {});

    new TypeOrmNestLogger().logQueryError(
      Object.assign(new Error('Table posts does not exist'), { code: 'ER_NO_SUCH_TABLE' }),
      'SELECT 1',
    );

    expect(error$).toHaveBeenCalledWith({
      message: 'query failed',
      error: 'Table posts does not exist',
      query: 'SELECT 1',
    });
  });
});
