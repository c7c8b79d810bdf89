// Long file: one real local receiver per delivery rule, plus the address table, in one place.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  isForbiddenAddress,
  sendWebhook,
  type WebhookDependencies,
  type WebhookRequest,
} from './webhook-sender.js';

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: (Server | TlsServer)[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

/** A receiver on 127.0.0.1 that records every request it is sent, then lets `respond` answer. */
async function startReceiver(respond: RequestListener, server: Server | TlsServer = createServer()) {
  const received: Received[] = [];
  server.on('request', (incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const { method = '', url: path = '', headers } = incoming;
      received.push({ method, path, headers, body: Buffer.concat(chunks).toString() });
      respond(incoming, response);
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}`, received };
}

function buildRequest(overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return {
    url: 'http://127.0.0.1:1/',
    headers: {
      'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
      'content-type': 'application/json',
    },
    body: '{"type":"post.created","data":{"id":"42","title":"Grüße"}}',
    timeoutMs: 2_000,
    allowPrivateNetworks: true,
    ...overrides,
  };
}

/** A lookup that answers from a list, one answer per call, and counts its calls. */
function fakeLookup(...answers: string[][]) {
  const calls: string[] = [];
  const deps: WebhookDependencies = {
    lookup: (hostname) => {
      calls.push(hostname);
      const addresses = answers[Math.min(calls.length, answers.length) - 1];
      return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
    },
  };
  return { deps, calls };
}

describe('sendWebhook to a receiver', () => {
  it('delivers the body and headers unchanged and returns the status', async () => {
    const receiver = await startReceiver((_, response) => response.writeHead(204).end());
    const request = buildRequest({ url: `${receiver.url}/hooks/in?tenant=7` });

    const result = await sendWebhook(request);

    expect(result).toEqual({ kind: 'response', status: 204, durationMs: expect.any(Number) as number });
    expect(receiver.received).toHaveLength(1);
    const [delivery] = receiver.received;
    expect(delivery).toMatchObject({ method: 'POST', path: '/hooks/in?tenant=7', body: request.body });
    expect(delivery.headers).toMatchObject({
      ...request.headers,
      host: `127.0.0.1:${receiver.port}`,
      'content-length': String(Buffer.byteLength(request.body)),
      connection: 'close',
    });
  });

  it('returns a 302 as it is and sends nothing to its Location', async () => {
    const elsewhere = await startReceiver((_, response) => response.end());
    const receiver = await startReceiver((_, response) => response.writeHead(302, { location: elsewhere.url }).end());

    const result = await sendWebhook(buildRequest({ url: receiver.url }));

    expect(result).toMatchObject({ kind: 'response', status: 302 });
    expect(elsewhere.received).toHaveLength(0);
  });

  it('reads Retry-After in seconds on a 429', async () => {
    const receiver = await startReceiver((_, response) => response.writeHead(429, { 'retry-after': '7' }).end());

    expect(await sendWebhook(buildRequest({ url: receiver.url }))).toMatchObject({ status: 429, retryAfterMs: 7_000 });
  });

  it('reads Retry-After as an HTTP-date on a 503', async () => {
    const at = new Date(Date.now() + 120_000).toUTCString();
    const receiver = await startReceiver((_, response) => response.writeHead(503, { 'retry-after': at }).end());

    const result = await sendWebhook(buildRequest({ url: receiver.url }));

    expect(result).toMatchObject({ kind: 'response', status: 503 });
    const retryAfterMs = result.kind === 'response' ? result.retryAfterMs : undefined;
    expect(retryAfterMs).toBeGreaterThan(115_000);
    expect(retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  it.each([
    ['Wed, 21 Oct 2015 07:28:00 GMT', 0],
    ['9999999999', 86_400_000],
    ['soon', undefined],
    ['-5', undefined],
    ['1.5', undefined],
    ['12345678901', undefined],
  ])('turns Retry-After: %s into retryAfterMs %s (a day at most, malformed ignored)', async (value, retryAfterMs) => {
    const receiver = await startReceiver((_, response) => response.writeHead(429, { 'retry-after': value }).end());

    const result = await sendWebhook(buildRequest({ url: receiver.url }));

    expect(result).toMatchObject({ kind: 'response', status: 429 });
    expect(result.kind === 'response' && result.retryAfterMs).toBe(retryAfterMs);
  });

  it('ignores Retry-After on other statuses', async () => {
    const receiver = await startReceiver((_, response) => response.writeHead(500, { 'retry-after': '7' }).end());

    const result = await sendWebhook(buildRequest({ url: receiver.url }));

    expect(result).toEqual({ kind: 'response', status: 500, durationMs: expect.any(Number) as number });
  });

  it('fails with a timeout when the receiver never answers', async () => {
    const receiver = await startReceiver(() => undefined);

    const result = await sendWebhook(buildRequest({ url: receiver.url, timeoutMs: 300 }));

    expect(result).toMatchObject({ kind: 'failed', error: 'timeout after 300 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(1_000);
  });

  it('fails with a timeout when the body never ends, though the status came', async () => {
    const receiver = await startReceiver((_, response) => response.writeHead(200).write('{"ok":'));

    const result = await sendWebhook(buildRequest({ url: receiver.url, timeoutMs: 300 }));

    expect(result).toMatchObject({ kind: 'failed', error: 'timeout after 300 ms' });
  });

  it('stops reading a 10 MB body after 64 KiB and closes the connection', async () => {
    const total = 10 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let closedBeforeTheEnd: Promise<boolean> = Promise.resolve(false);
    const receiver = await startReceiver((_, response) => {
      closedBeforeTheEnd = new Promise((resolve) => response.on('close', () => resolve(written < total)));
      const pump = (): void => {
        while (written < total) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      response.writeHead(200);
      pump();
    });

    const result = await sendWebhook(buildRequest({ url: receiver.url }));

    expect(result).toMatchObject({ kind: 'response', status: 200 });
    expect(result.durationMs).toBeLessThan(1_000);
    expect(await closedBeforeTheEnd).toBe(true);
  });

  it('fails when the connection is refused', async () => {
    const closed = await startReceiver(() => undefined);
    const server = servers.pop()!;
    await new Promise((resolve) => server.close(resolve));

    const result = await sendWebhook(buildRequest({ url: closed.url }));

    expect(result).toMatchObject({ kind: 'failed', error: expect.stringContaining('ECONNREFUSED') as string });
  });

  it('fails with a timeout when the lookup never answers', async () => {
    const deps: WebhookDependencies = { lookup: () => new Promise(() => undefined) };

    const result = await sendWebhook(buildRequest({ url: 'http://slow-dns.test/', timeoutMs: 300 }), deps);

    expect(result).toMatchObject({ kind: 'failed', error: 'timeout after 300 ms' });
    expect(result.durationMs).toBeLessThan(1_000);
  });

  it('fails when the host does not resolve', async () => {
    const deps: WebhookDependencies = {
      lookup: () => Promise.reject(new Error('getaddrinfo ENOTFOUND nowhere.test')),
    };

    const result = await sendWebhook(buildRequest({ url: 'http://nowhere.test/' }), deps);

    expect(result).toMatchObject({ kind: 'failed', error: 'getaddrinfo ENOTFOUND nowhere.test' });
  });
});

describe('sendWebhook and DNS rebinding', () => {
  it('resolves the host once and connects to the address it checked', async () => {
    const receiver = await startReceiver((_, response) => response.writeHead(200).end());
    const { deps, calls } = fakeLookup(['127.0.0.1'], ['10.0.0.1']);

    const result = await sendWebhook(buildRequest({ url: `http://rebind.test:${receiver.port}/in` }), deps);

    expect(result).toMatchObject({ kind: 'response', status: 200 });
    expect(calls).toEqual(['rebind.test']);
    expect(receiver.received[0].headers.host).toBe(`rebind.test:${receiver.port}`);
  });

  it('refuses a host when any one of its addresses is forbidden, naming it', async () => {
    const { deps } = fakeLookup(['8.8.8.8', '2606:4700:4700::1111', '10.0.0.1']);

    const result = await sendWebhook(buildRequest({ url: 'http://mixed.test/', allowPrivateNetworks: false }), deps);

    expect(result).toMatchObject({ kind: 'refused', reason: expect.stringContaining('10.0.0.1') as string });
  });

  it('sends the host name as SNI to the checked address and verifies the certificate', async () => {
    const names: string[] = [];
    const server = createTlsServer({
      key: SELF_SIGNED_KEY,
      cert: SELF_SIGNED_CERTIFICATE,
      SNICallback: (name, callback) => {
        names.push(name);
        callback(null, undefined);
      },
    });
    const receiver = await startReceiver((_, response) => response.end(), server);
    const { deps, calls } = fakeLookup(['127.0.0.1']);

    const result = await sendWebhook(buildRequest({ url: `https://webhook.test:${receiver.port}/` }), deps);

    // Self-signed, so an honest check must refuse it before a byte of the webhook is sent.
    expect(result).toMatchObject({ kind: 'failed', error: expect.stringMatching(/certificate/) as string });
    expect(calls).toEqual(['webhook.test']);
    expect(names).toEqual(['webhook.test']);
    expect(receiver.received).toHaveLength(0);
  });
});

describe('sendWebhook without private networks', () => {
  it('refuses 127.0.0.1 and sends it nothing', async () => {
    const receiver = await startReceiver((_, response) => response.end());

    const result = await sendWebhook(buildRequest({ url: receiver.url, allowPrivateNetworks: false }));

    expect(result).toMatchObject({ kind: 'refused', reason: expect.stringContaining('127.0.0.1') as string });
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses localhost, which resolves to loopback', async () => {
    const receiver = await startReceiver((_, response) => response.end());

    const url = `http://localhost:${receiver.port}/`;
    const result = await sendWebhook(buildRequest({ url, allowPrivateNetworks: false }));

    expect(result).toMatchObject({ kind: 'refused' });
    expect(receiver.received).toHaveLength(0);
  });

  it.each([
    'http://[::1]/',
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00:ec2::254]/latest/meta-data',
    'http://[::ffff:127.0.0.1]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://10.1.2.3/',
    'http://2130706433/',
    'https://0x7f.1/',
  ])('refuses %s without looking it up', async (url) => {
    const { deps, calls } = fakeLookup(['8.8.8.8']);

    const result = await sendWebhook(buildRequest({ url, allowPrivateNetworks: false }), deps);

    expect(result).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('not a public address') as string,
    });
    expect(calls).toEqual([]);
  });

  it.each([false, true])('refuses URLs it never sends to (private networks allowed: %s)', async (allowed) => {
    const { deps, calls } = fakeLookup(['8.8.8.8']);
    for (const url of [
      'ftp://example.com/',
      'file:///etc/passwd',
      'http://user:pw@example.com/',
      'https://user@example.com/',
      'not a url',
    ]) {
      const result = await sendWebhook(buildRequest({ url, allowPrivateNetworks: allowed }), deps);

      expect(result, url).toMatchObject({ kind: 'refused' });
    }
    expect(calls).toEqual([]);
  });
});

describe('checkWebhookUrl', () => {
  it('accepts a URL whose host resolves to public addresses only', async () => {
    const { deps } = fakeLookup(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);

    expect(await checkWebhookUrl('https://hooks.example.com:8443/in', false, deps)).toBeNull();
  });

  it.each([
    ['https://internal.example.com/', 'resolves to 192.168.1.20'],
    ['ftp://example.com/', 'scheme ftp:'],
    ['https://user:pw@example.com/', 'credentials'],
  ])('refuses %s, saying why', async (url, reason) => {
    const { deps } = fakeLookup(['8.8.8.8', '192.168.1.20']);

    expect(await checkWebhookUrl(url, false, deps)).toContain(reason);
  });

  it('refuses a host that does not resolve', async () => {
    const deps: WebhookDependencies = { lookup: () => Promise.reject(new Error('getaddrinfo ENOTFOUND x.test')) };

    expect(await checkWebhookUrl('https://x.test/', false, deps)).toContain('ENOTFOUND');
  });

  it('accepts a private address when private networks are allowed', async () => {
    expect(await checkWebhookUrl('http://127.0.0.1:3000/in', true)).toBeNull();
  });
});

describe('isForbiddenAddress', () => {
  it.each([
    ['0.0.0.0', 'this network'],
    ['0.255.255.255', 'this network'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.1', 'TEST-NET-1'],
    ['192.168.0.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.9', 'TEST-NET-3'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'AWS metadata'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fe80::1%eth0', 'scoped link-local'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::169.254.169.254', 'NAT64 of cloud metadata'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a00:1', 'IPv4-mapped private'],
    ['::ffff:0.0.0.0', 'IPv4-mapped this network'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::c0a8:1', 'IPv4-compatible private'],
    ['2001:db8::1', 'documentation'],
    ['2002:7f00:1::1', '6to4 (embeds 127.0.0.1)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['64:ff9b:1::a00:1', 'NAT64 local use'],
    ['100::1', 'discard-only'],
    ['example.com', 'not an address'],
    ['', 'not an address'],
  ])('forbids %s (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.254',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2001:db9::1',
    '100:0:0:1::1',
  ])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

// TEST-ONLY self-signed certificate and key for webhook.test (no use outside this spec; not trusted
// anywhere), so the TLS test can show that certificates are verified.
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzbXB20hjp2cqow5N
DYkAUTPEYoxJOvUxxf/a1w5FibmhRANCAAT2R1LtjxXii9X511FMQO+A1NF/r6Qe
MLUiGfN43TAyfUng1+sbAq9mAd2QJhvwpWtBSyELngAeJ1DOWB/q/ZVb
-----END PRIVATE KEY-----
`;
const SELF_SIGNED_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIBnTCCAUSgAwIBAgIUdwYmQqm6n1itm1esNjF2KdBihbMwCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMd2ViaG9vay50ZXN0MCAXDTI2MTEyNDA5MjUzOFoYDzIxMjYx
MDMxMDkyNTM4WjAXMRUwEwYDVQQDDAx3ZWJob29rLnRlc3QwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAAT2R1LtjxXii9X511FMQO+A1NF/r6QeMLUiGfN43TAyfUng
1+sbAq9mAd2QJhvwpWtBSyELngAeJ1DOWB/q/ZVbo2wwajAdBgNVHQ4EFgQUyfUl
OcgesEgpEDVgpnMk64yjDigwHwYDVR0jBBgwFoAUyfUlOcgesEgpEDVgpnMk64yj
DigwDwYDVR0TAQH/BAUwAwEB/zAXBgNVHREEEDAOggx3ZWJob29rLnRlc3QwCgYI
KoZIzj0EAwIDRwAwRAIgHPX2P8WmC/iJHeDhkpJ22FRVPPZzTYK+xbiZHVC1mNUC
ID/9dj/p9SaBYwozRpz4c6Ktwh5Ply5OJBpr2wMVY8K7
-----END CERTIFICATE-----
`;
