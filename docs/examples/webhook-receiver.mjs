// A webhook receiver that verifies Standard Webhooks signatures with the `standardwebhooks` library,
// as a consumer of the posts API would write it.
//
//   WEBHOOK_SECRET=whsec_… PORT=4000 node docs/examples/webhook-receiver.mjs
//
// Then subscribe it (admin token): POST /webhooks {"url":"http://<host>:4000/hook","events":["*"]}.
// Rules a receiver should follow, all shown here:
// - verify the signature over the raw body, before parsing it (a re-serialised body would not verify);
// - refuse an old timestamp (the library allows 5 minutes) and answer 2xx quickly;
// - use webhook-id as the idempotency key: the same event may arrive more than once (at least once);
// - use data.version to drop an update older than the one already applied.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';

const MAX_BODY_BYTES = 1024 * 1024;

/** An HTTP server that calls `onEvent(event)` once per webhook-id for every correctly signed delivery. */
export function createReceiver(secret, onEvent) {
  const verifier = new Webhook(secret);
  const seen = new Set(); // in production: a table with a unique key on webhook-id
  return createServer((request, response) => {
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event;
      try {
        event = verifier.verify(body, {
          'webhook-id': request.headers['webhook-id'] ?? '',
          'webhook-timestamp': request.headers['webhook-timestamp'] ?? '',
          'webhook-signature': request.headers['webhook-signature'] ?? '',
        });
      } catch {
        response.writeHead(401).end();
        return;
      }
      const id = request.headers['webhook-id'];
      if (!seen.has(id)) {
        seen.add(id);
        onEvent(event);
      }
      response.writeHead(204).end();
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    process.stderr.write('set WEBHOOK_SECRET to the whsec_… secret POST /webhooks returned\n');
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 4000);
  createReceiver(secret, (event) =>
    process.stdout.write(`${event.type} ${event.id} post ${event.data.post.id} v${event.data.version}\n`),
  ).listen(port, () => process.stdout.write(`listening on :${port}\n`));
}
