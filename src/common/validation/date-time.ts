import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

// RFC 3339 §5.6 date-time: full-date "T" partial-time time-offset; T and Z may be lowercase (§5.6 NOTE).
// Fixed-width fields only, so the match is linear. ISO 8601's other forms (week dates such as
// 2099-W01-1, ordinal dates, the basic format 20991231T000000Z) are not RFC 3339: JavaScript's Date
// does not read them, and they would become an Invalid Date.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

// MySQL's DATETIME holds years 1000 to 9999; one range for every database.
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = Date.UTC(10_000, 0, 1) - 1;

/**
 * The instant an RFC 3339 date-time names, or null when the text is not one or names no real instant
 * (2099-02-30, 25:00, an offset of +24:00) or one outside the years 1000–9999. Fractions finer than a
 * millisecond are truncated; leap seconds (:60) are refused, as JavaScript cannot represent them.
 */
export function parseDateTime(value: string): Date | null {
  const match = DATE_TIME.exec(value);
  if (match === null) return null;
  const [, year, month, day, hour, minute, second, fraction = '', sign, offsetHour = '00', offsetMinute = '00'] = match;
  if (
    // Date.UTC would read years 0–99 as 1900–1999; none of 0000–0999 is in range anyway.
    !inRange(year, 1000, 9999) ||
    !inRange(month, 1, 12) ||
    !inRange(day, 1, daysInMonth(Number(year), Number(month))) ||
    !inRange(hour, 0, 23) ||
    !inRange(minute, 0, 59) ||
    !inRange(second, 0, 59) ||
    !inRange(offsetHour, 0, 23) ||
    !inRange(offsetMinute, 0, 59)
  ) {
    return null;
  }
  const milliseconds = Number((fraction.slice(1) + '00').slice(0, 3));
  const local = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHour) * 60 + Number(offsetMinute)) * 60_000;
  const instant = local + milliseconds - offset;
  return instant >= EARLIEST && instant <= LATEST ? new Date(instant) : null;
}

function inRange(digits: string, low: number, high: number): boolean {
  const value = Number(digits);
  return value >= low && value <= high;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeapYear(year) ? 1 : 0);
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** class-validator decorator: a string that parseDateTime reads as an instant. */
export function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isDateTime',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseDateTime(value) !== null,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} must be an RFC 3339 date-time such as 2030-01-31T12:00:00Z`,
      },
    });
}
