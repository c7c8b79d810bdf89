import 'reflect-metadata';
import { Body, Post, Res, SetMetadata } from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants.js';
import { describe, expect, it, vi } from 'vitest';
import { Idempotent } from './idempotent.decorator.js';
import { IdempotencyService } from './idempotency.service.js';

const fingerprint = () => ['test'];

class Handlers {
  @Post()
  @SetMetadata('applied-before', true)
  @Idempotent({ fingerprint })
  @SetMetadata('applied-after', true)
  create(@Body() input: unknown, @Res({ passthrough: true }) response: unknown): Promise<unknown> {
    return Promise.resolve({ input, status: (response as { statusCode: number }).statusCode });
  }
}

describe('@Idempotent()', () => {
  it('refuses a handler that does not take the response', () => {
    expect(() => {
      class NoResponse {
        @Idempotent({ fingerprint })
        create(@Body() input: unknown): Promise<unknown> {
          return Promise.resolve(input);
        }
      }
      return NoResponse;
    }).toThrow('@Idempotent() on create: the handler must take @Res({ passthrough: true })');
  });

  it('has Nest inject IdempotencyService into the controller, so each application uses its own', () => {
    const properties = Reflect.getMetadata(PROPERTY_DEPS_METADATA, Handlers) as { type: unknown }[];
    expect(properties.map(({ type }) => type)).toEqual([IdempotencyService]);
  });

  it('keeps the metadata of the decorators on either side of it on the handler', () => {
    expect(Reflect.getMetadata('applied-before', Handlers.prototype.create)).toBe(true);
    expect(Reflect.getMetadata('applied-after', Handlers.prototype.create)).toBe(true);
    expect(Handlers.prototype.create.name).toBe('create');
  });

  it('runs the handler as it is, without the service, when the request has no Idempotency-Key', async () => {
    const { handlers, execute } = withFakeService();
    await expect(handlers.create('body', fakeResponse({}))).resolves.toEqual({ input: 'body', status: 201 });
    expect(execute).not.toHaveBeenCalled();
  });

  it('runs the handler inside IdempotencyService.execute when the request has a key', async () => {
    const { handlers, execute } = withFakeService();
    const response = fakeResponse({ 'idempotency-key': ' k-1 ' });
    await expect(handlers.create('body', response)).resolves.toBe('{"input":"body","status":201}');
    expect(execute).toHaveBeenCalledOnce();
    expect(execute.mock.calls[0][0]).toMatchObject({ principalId: 'p-1', key: 'k-1' });
    expect(response.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
  });
});

/** A Handlers whose injected IdempotencyService (the property Nest would set) runs the operation. */
function withFakeService() {
  const handlers = new Handlers();
  const [{ key }] = Reflect.getMetadata(PROPERTY_DEPS_METADATA, Handlers) as { key: symbol }[];
  const execute = vi.fn(async (_scope: unknown, run: () => Promise<unknown>) => ({
    response: await run(),
    replayed: false,
  }));
  Object.assign(handlers, { [key]: { execute } });
  return { handlers, execute };
}

function fakeResponse(requestHeaders: Record<string, string>) {
  const headers: Record<string, string> = {};
  return {
    headers,
    statusCode: 201,
    req: { get: (name: string) => requestHeaders[name], user: { id: 'p-1' } },
    getHeaderNames: () => Object.keys(headers),
    getRawHeaderNames: () => Object.keys(headers),
    getHeader: (name: string) => headers[name.toLowerCase()],
    setHeader(name: string, value: string) {
      headers[name.toLowerCase()] = value;
      return this;
    },
    status(code: number) {
      this.statusCode = code;
      return this;
    },
  };
}
