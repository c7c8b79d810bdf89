import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

export interface TextRule {
  minLength: number;
  maxLength: number;
  /** Must contain something other than white space. */
  requireVisible: boolean;
  /** 'control': no Unicode Cc characters at all (titles, names); 'nul': only U+0000 is refused. */
  forbidden: 'control' | 'nul';
}

const CONTROL_CHARACTER = /\p{Cc}/u;
const VISIBLE_CHARACTER = /\S/u;

/** Length in Unicode code points: a surrogate pair (an emoji, say) is one character. */
export function codePointLength(value: string): number {
  let length = 0;
  for (let index = 0; index < value.length; index++) {
    const unit = value.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < value.length) {
      const next = value.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    length++;
  }
  return length;
}

/** Why `value` breaks `rule`, or null when it does not. The first broken rule is reported. */
export function checkText(value: unknown, rule: TextRule): string | null {
  if (value === null) return 'must be a string, not null';
  if (typeof value !== 'string') return `must be a string, not ${Array.isArray(value) ? 'an array' : typeof value}`;
  // Checked first: a lone surrogate cannot be stored as UTF-8 and would come back altered.
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it contains an unpaired surrogate)';
  const length = codePointLength(value);
  if (length < rule.minLength || length > rule.maxLength) {
    return `must be ${rule.minLength} to ${rule.maxLength} characters long (it has ${length})`;
  }
  if (rule.requireVisible && !VISIBLE_CHARACTER.test(value))
    return 'must contain at least one non-whitespace character';
  if (rule.forbidden === 'control') {
    const found = CONTROL_CHARACTER.exec(value);
    if (found) return `must not contain control characters (found U+${hex(found[0])})`;
  } else if (value.includes('\u0000')) {
    return 'must not contain NUL (U+0000) characters';
  }
  return null;
}

function hex(character: string): string {
  return character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

/** class-validator decorator for a text field governed by `rule`; the message names the broken part. */
export function IsText(rule: TextRule, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isText',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => checkText(value, rule) === null,
        defaultMessage: (args?: ValidationArguments) => `${args?.property} ${checkText(args?.value, rule)}`,
      },
    });
}
