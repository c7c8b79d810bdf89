import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers to the nth request (from 1): a status, or a function writing the response. */
export type Answer = number | ((response: ServerResponse) => void);

/**
 * A local HTTP server standing for a customer's webhook endpoint: it records every request and
 * answers what `answer(n)` says (200 by default). `stop()` and `start()` take it away and bring it
 * back on the same port.
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  answer: (n: number, delivery: ReceivedDelivery) => Answer = () => 200;
  private server?: Server;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const delivery = { headers: request.headers, body, at: Date.now() };
        this.received.push(delivery);
        const answer = this.answer(this.received.length, delivery);
        if (typeof answer === 'number') response.writeHead(answer).end();
        else answer(response);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `count` requests have arrived, or throws after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedDelivery[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline)
        throw new Error(`${this.received.length} of ${count} deliveries after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.received.slice(0, count);
  }
}
