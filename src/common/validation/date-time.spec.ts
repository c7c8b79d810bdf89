import { describe, expect, it } from 'vitest';
import { parseDateTime } from './date-time.js';

describe('parseDateTime', () => {
  it.each([
    ['2099-12-31T23:59:59Z', '2099-12-31T23:59:59.000Z'],
    ['2099-12-31t23:59:59z', '2099-12-31T23:59:59.000Z'],
    ['2099-01-01T00:00:00.5Z', '2099-01-01T00:00:00.500Z'],
    ['2099-01-01T00:00:00.123456789Z', '2099-01-01T00:00:00.123Z'],
    ['2099-01-01T01:30:00+01:30', '2099-01-01T00:00:00.000Z'],
    ['2098-12-31T19:00:00-05:00', '2099-01-01T00:00:00.000Z'],
    ['2096-02-29T00:00:00Z', '2096-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['1000-01-01T00:00:00Z', '1000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('reads %s as the instant %s', (text, instant) => {
    expect(parseDateTime(text)?.toISOString()).toBe(instant);
  });

  it.each([
    ['an ISO 8601 week date', '2099-W01-1'],
    ['the ISO 8601 basic format', '20991231T000000Z'],
    ['an ordinal date', '2099-365T00:00:00Z'],
    ['a date without a time', '2099-12-31'],
    ['a time without an offset', '2099-12-31T00:00:00'],
    ['a space for T', '2099-12-31 00:00:00Z'],
    ['February 30', '2099-02-30T00:00:00Z'],
    ['February 29 of a common year', '2100-02-29T00:00:00Z'],
    ['month 13', '2099-13-01T00:00:00Z'],
    ['hour 24', '2099-01-01T24:00:00Z'],
    ['a leap second', '2016-12-31T23:59:60Z'],
    ['an offset of 24 hours', '2099-01-01T00:00:00+24:00'],
    ['an offset without a colon', '2099-01-01T00:00:00+0100'],
    ['year 0050, which Date.UTC would read as 1950', '0050-01-01T00:00:00Z'],
    ['an instant past 9999', '9999-12-31T23:00:00-05:00'],
    ['a six-digit year', '+012099-01-01T00:00:00Z'],
    ['an empty fraction', '2099-01-01T00:00:00.Z'],
    ['trailing text', '2099-01-01T00:00:00Z '],
  ])('refuses %s (%s)', (_, text) => {
    expect(parseDateTime(text)).toBeNull();
  });

  it('reads a long run of digits where a date-time should be in linear time', () => {
    const start = performance.now();
    expect(parseDateTime('2'.repeat(1_000_000))).toBeNull();
    // A backtracking pattern would take minutes; fixed-width fields fail at the first mismatch.
    expect(performance.now() - start).toBeLessThan(1_000);
  });
});
