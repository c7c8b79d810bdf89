import { EventSource } from 'eventsource';

export interface ReceivedEvent {
  id: string;
  type: string;
  data: { id: string; type: string; data: Record<string, unknown> };
}

/**
 * A real SSE client (the `eventsource` package, which follows the WHATWG EventSource: it reconnects
 * by itself and sends Last-Event-ID) on GET /events with a bearer token, collecting the events of
 * `types` in arrival order.
 */
export function openStream(url: string, token: string, types: readonly string[], headers: Record<string, string> = {}) {
  const received: ReceivedEvent[] = [];
  let opened = 0;
  const errors: string[] = [];
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...init.headers, ...headers, authorization: `Bearer ${token}` } }),
  });
  source.addEventListener('open', () => opened++);
  source.addEventListener('error', (event) => errors.push(String((event as { message?: string }).message ?? 'error')));
  for (const type of types) {
    source.addEventListener(type, (event: Event) => {
      // A MessageEvent (Node's types do not declare the global one).
      const message = event as Event & { lastEventId: string; data: string };
      received.push({
        id: message.lastEventId,
        type: message.type,
        data: JSON.parse(message.data) as ReceivedEvent['data'],
      });
    });
  }
  return {
    source,
    received,
    errors,
    /** How many times the connection has opened (1 + reconnects). */
    get opened(): number {
      return opened;
    },
    /** Resolves once `count` events have arrived, or rejects after `timeoutMs`. */
    async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedEvent[]> {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`${received.length} of ${count} events after ${timeoutMs} ms (errors: ${errors.join('; ')})`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received.slice(0, count);
    },
    async waitOpen(times = 1, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (opened < times) {
        if (Date.now() > deadline) throw new Error(`opened ${opened} of ${times} times (errors: ${errors.join('; ')})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => source.close(),
  };
}
