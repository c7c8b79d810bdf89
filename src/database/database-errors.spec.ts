import { CannotExecuteNotConnectedError, QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, isDeadlock } from './database-errors.js';

/** An Error carrying a driver error `code`, as mysql2, better-sqlite3 and Node's net module produce. */
function driverError(code: string, message = `driver failure ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

describe('isDatabaseUnavailable', () => {
  const unavailableCodes = [
    'ECONNREFUSED',
    'PROTOCOL_CONNECTION_LOST',
    'ER_LOCK_DEADLOCK',
    'SQLITE_BUSY',
    'SQLITE_BUSY_SNAPSHOT',
    'ECONNRESET',
    'ETIMEDOUT',
    'ER_LOCK_WAIT_TIMEOUT',
    'SQLITE_LOCKED',
  ];
  const queryCodes = ['ER_PARSE_ERROR', 'ER_DUP_ENTRY', 'SQLITE_CONSTRAINT', 'ER_NO_SUCH_TABLE'];

  it.each(unavailableCodes)('is true for an Error with code %s', (code) => {
    const error = driverError(code);

    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each(unavailableCodes)('is true for a QueryFailedError wrapping a driver error with code %s', (code) => {
    const error = new QueryFailedError('SELECT 1', [], driverError(code));

    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each(unavailableCodes)('is true for an Error whose cause has code %s', (code) => {
    const error = new Error('the query failed', { cause: driverError(code) });

    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('is true for a driver error found two causes down', () => {
    const error = new Error('outer', { cause: new Error('middle', { cause: driverError('ECONNREFUSED') }) });

    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each(['Pool is closed.', 'Pool is closed', 'Queue limit reached.', 'connect ETIMEDOUT 10.0.0.1:3306'])(
    'is true for an Error with the message %j',
    (message) => {
      const error = new Error(message);

      expect(isDatabaseUnavailable(error)).toBe(true);
    },
  );

  it('is true for a QueryFailedError wrapping a closed pool error', () => {
    const error = new QueryFailedError('SELECT 1', [], new Error('Pool is closed.'));

    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('is true for TypeORM’s error for a data source that is not connected', () => {
    const error = new CannotExecuteNotConnectedError();

    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each(queryCodes)('is false for an Error with code %s', (code) => {
    const error = driverError(code);

    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it.each(queryCodes)('is false for a QueryFailedError wrapping a driver error with code %s', (code) => {
    const error = new QueryFailedError('INSERT INTO post VALUES (1)', [], driverError(code));

    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it.each([
    ['a plain Error', new Error('something went wrong')],
    ['a TypeError', new TypeError('x is not a function')],
    ['an Error whose code is not a string', Object.assign(new Error('numeric code'), { code: 5 })],
    ['an Error whose cause is a string', new Error('outer', { cause: 'ECONNREFUSED' })],
    ['a string', 'ECONNREFUSED'],
    ['a plain object with an unavailable code', { code: 'ECONNREFUSED', message: 'Pool is closed.' }],
    ['null', null],
    ['undefined', undefined],
    ['a number', 503],
  ])('is false for %s', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('is false, and terminates, for an Error that is its own cause', () => {
    const error = new Error('loop');
    error.cause = error;

    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('is false, and terminates, for two Errors that are each other’s cause', () => {
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    first.cause = second;

    expect(isDatabaseUnavailable(first)).toBe(false);
  });

  it('is true for an unavailable Error whose cause points back to itself', () => {
    const error = driverError('ECONNREFUSED');
    error.cause = error;

    expect(isDatabaseUnavailable(error)).toBe(true);
  });
});

describe('isDeadlock', () => {
  it('is true for ER_LOCK_DEADLOCK, also wrapped in a QueryFailedError', () => {
    expect(isDeadlock(driverError('ER_LOCK_DEADLOCK'))).toBe(true);
    expect(isDeadlock(new QueryFailedError('DELETE …', [], driverError('ER_LOCK_DEADLOCK')))).toBe(true);
  });

  it('is false for a lock wait timeout and for other errors: those are not rolled back whole', () => {
    expect(isDeadlock(driverError('ER_LOCK_WAIT_TIMEOUT'))).toBe(false);
    expect(isDeadlock(driverError('ECONNRESET'))).toBe(false);
    expect(isDeadlock(new Error('ER_LOCK_DEADLOCK'))).toBe(false);
  });
});
