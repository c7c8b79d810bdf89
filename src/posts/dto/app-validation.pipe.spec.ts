import { describe, expect, it } from 'vitest';
import { ListPostsQueryDto } from './list-posts-query.dto.js';
import { PostInputDto } from './post-input.dto.js';
import { ProblemException } from '../../http/problem/problem.exception.js';
import { AppValidationPipe } from '../../http/app-validation.pipe.js';

/** What the pipe throws for `value`, or undefined when it passes. */
async function errorFor(value: unknown, type: 'body' | 'query', metatype: new () => object): Promise<unknown> {
  try {
    await new AppValidationPipe().transform(value, { type, metatype });
    return undefined;
  } catch (error) {
    return error;
  }
}

/** `members` plus one more, named `name`, as JSON.parse would build it (an own property, even for __proto__). */
function withMember(members: Record<string, string>, name: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(members).replace('{', `{${JSON.stringify(name)}:"1",`)) as Record<string, unknown>;
}

// Every name Object.prototype has (toString, valueOf, hasOwnProperty, __proto__, constructor, ...):
// class-transformer leaves such members off the DTO, so the whitelist alone would never report them.
const INHERITED_NAMES = Object.getOwnPropertyNames(Object.prototype);

describe('AppValidationPipe', () => {
  it.each(INHERITED_NAMES)('refuses a body member named %s as an unknown field', async (name) => {
    const body = withMember({ title: 't', content: 'c', author: 'a' }, name);

    const error = await errorFor(body, 'body', PostInputDto);

    expect(error).toBeInstanceOf(ProblemException);
    expect((error as ProblemException).errors).toEqual([{ pointer: `/${name}`, detail: `unknown field "${name}"` }]);
  });

  it.each(INHERITED_NAMES)('refuses a query parameter named %s as unknown', async (name) => {
    const query = withMember({ limit: '5' }, name);

    const error = await errorFor(query, 'query', ListPostsQueryDto);

    expect(error).toBeInstanceOf(ProblemException);
    expect((error as ProblemException).errors).toEqual([
      { parameter: name, detail: `unknown query parameter "${name}"` },
    ]);
  });

  it('passes a body with exactly the post fields', async () => {
    expect(await errorFor({ title: 't', content: 'c', author: 'a' }, 'body', PostInputDto)).toBeUndefined();
  });
});
