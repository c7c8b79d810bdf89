// Long file: the URL checks, the address block list and the bounded POST are one SSRF boundary, best read together.
import { lookup as dnsLookup } from 'node:dns/promises';
import { type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';

export interface WebhookRequest {
  url: string; // http: or https: only
  headers: Record<string, string>; // webhook-id, webhook-timestamp, webhook-signature, content-type
  body: string; // the JSON payload, sent as is
  timeoutMs: number; // the whole exchange: DNS, connect, TLS, response headers and body read
  allowPrivateNetworks: boolean; // WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (tests, private deployments)
}

export type WebhookResult =
  | { kind: 'response'; status: number; retryAfterMs?: number; durationMs: number }
  | { kind: 'refused'; reason: string; durationMs: number }
  | { kind: 'failed'; error: string; durationMs: number };

export interface WebhookDependencies {
  lookup: (hostname: string, options: { all: true; verbatim: true }) => Promise<LookupAddress[]>;
}

const defaultDependencies: WebhookDependencies = { lookup: (hostname, options) => dnsLookup(hostname, options) };

// Enough to see a receiver's answer; the rest is read no further, so a hostile receiver cannot make
// us hold an unbounded body.
const MAX_BODY_BYTES = 64 * 1024;
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
// Creation-time checks have no caller-given deadline, and a stuck resolver must not hold a request.
const CHECK_TIMEOUT_MS = 10_000;
// Every HTTP-date form (IMF-fixdate, RFC 850, asctime) starts with the day's name; V8's Date.parse
// alone would read "-5" or "1.5" as dates.
const HTTP_DATE_DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

// Addresses that are not the public internet: this host, the local networks, cloud metadata
// services (169.254.169.254, fd00:ec2::254), documentation, benchmarking, multicast and reserved.
const FORBIDDEN = new BlockList();
for (const [network, prefix, family] of [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['255.255.255.255', 32, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['100::', 64, 'ipv6'],
  // Tunnels whose address embeds an IPv4 one (6to4, Teredo) and NAT64's local-use prefix: no
  // webhook receiver needs them, and each could carry a packet to a private IPv4 address.
  ['2002::', 16, 'ipv6'],
  ['2001::', 32, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, family);
}

// IPv6 ranges whose low 32 bits are an IPv4 address the packets end up at (IPv4-mapped, NAT64,
// IPv4-compatible): judged by that IPv4 address.
const EMBEDS_IPV4 = new BlockList();
EMBEDS_IPV4.addSubnet('::ffff:0:0', 96, 'ipv6');
EMBEDS_IPV4.addSubnet('64:ff9b::', 96, 'ipv6');
EMBEDS_IPV4.addSubnet('::', 96, 'ipv6');

/** True when a webhook must not be sent to this address; anything that is not an IP address is. */
export function isForbiddenAddress(address: string): boolean {
  if (isIPv4(address)) return FORBIDDEN.check(address, 'ipv4');
  // A zone index (fe80::1%eth0) only ever comes with scoped addresses, never public ones.
  if (!isIPv6(address) || address.includes('%')) return true;
  if (FORBIDDEN.check(address, 'ipv6')) return true;
  if (!EMBEDS_IPV4.check(address, 'ipv6')) return false;
  const embedded = embeddedIPv4(address);
  return embedded === null || FORBIDDEN.check(embedded, 'ipv4');
}

/** The low 32 bits of an IPv6 address, as an IPv4 address. */
function embeddedIPv4(address: string): string | null {
  let canonical: string;
  try {
    // The URL parser writes IPv6 in its canonical form: hexadecimal groups only, no dotted quad.
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  // Zeros are compressed only before the groups after `::`, so two leading zero groups make the last
  // two groups right whatever was compressed.
  const tail = canonical.split('::').at(-1) ?? '';
  const groups = ['0', '0', ...tail.split(':').filter((group) => group !== '')];
  const [high, low] = groups.slice(-2).map((group) => Number.parseInt(group, 16));
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** For creation-time validation of a URL: null when acceptable, else the reason. */
export async function checkWebhookUrl(
  url: string,
  allowPrivateNetworks: boolean,
  deps: WebhookDependencies = defaultDependencies,
): Promise<string | null> {
  const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    const target = await resolveTarget(url, allowPrivateNetworks, deps, signal);
    return typeof target === 'string' ? target : null;
  } catch (error) {
    const why = signal.aborted ? `no answer within ${CHECK_TIMEOUT_MS} ms` : errorMessage(error);
    return `the host cannot be resolved: ${why}`;
  }
}

/** Delivers one webhook: resolves and checks the host once, then POSTs to the checked address. */
export async function sendWebhook(
  request: WebhookRequest,
  deps: WebhookDependencies = defaultDependencies,
): Promise<WebhookResult> {
  const started = performance.now();
  const durationMs = (): number => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    const target = await resolveTarget(request.url, request.allowPrivateNetworks, deps, signal);
    if (typeof target === 'string') return { kind: 'refused', reason: target, durationMs: durationMs() };
    const answer = await post(target, request, signal);
    return { kind: 'response', ...answer, durationMs: durationMs() };
  } catch (error) {
    const message = signal.aborted ? `timeout after ${request.timeoutMs} ms` : errorMessage(error);
    return { kind: 'failed', error: message, durationMs: durationMs() };
  }
}

type Target = { url: URL; hostname: string; address: string };

/** The address to connect to, or why we never send to this URL; throws when the host does not resolve. */
async function resolveTarget(
  rawUrl: string,
  allowPrivateNetworks: boolean,
  deps: WebhookDependencies,
  signal: AbortSignal,
): Promise<Target | string> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `the scheme ${url.protocol} is not http: or https:`;
  if (url.username !== '' || url.password !== '') return 'the URL must not carry credentials';
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const resolve = (): Promise<LookupAddress[]> => deps.lookup(hostname, { all: true, verbatim: true });
  const found = isIP(hostname) !== 0 ? [{ address: hostname }] : await untilAborted(resolve(), signal);
  const addresses = found.map(({ address }) => address);
  if (addresses.length === 0) throw new Error(`no address for ${hostname}`);
  if (!allowPrivateNetworks) {
    // Every address, not only the one we would use: a name may mix public and private answers.
    const forbidden = addresses.find(isForbiddenAddress);
    if (forbidden !== undefined) return `${hostname} resolves to ${forbidden}, which is not a public address`;
  }
  return { url, hostname, address: addresses[0] };
}

/** DNS lookups take no signal; this stops waiting for one when the deadline passes. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  const aborted = new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(new Error('aborted'));
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
  return Promise.race([promise, aborted]);
}

/** POSTs the body to the checked address and reads at most MAX_BODY_BYTES of the answer. */
function post(
  target: Target,
  request: WebhookRequest,
  signal: AbortSignal,
): Promise<{ status: number; retryAfterMs?: number }> {
  const { url, hostname, address } = target;
  const options: RequestOptions = {
    // The checked address itself, never the name again: a second resolution could answer otherwise
    // (DNS rebinding). Host, SNI and the certificate check still use the name.
    host: address,
    port: url.port === '' ? undefined : Number(url.port),
    servername: isIP(hostname) === 0 ? hostname : undefined,
    path: url.pathname + url.search,
    method: 'POST',
    // No reuse: the next delivery resolves and checks again.
    agent: false,
    headers: {
      ...request.headers,
      host: url.host,
      'content-length': String(Buffer.byteLength(request.body)),
      connection: 'close',
    },
  };
  return new Promise((resolve, reject) => {
    // Redirects are never followed: http.request does not, and a 3xx is returned as it is.
    const outgoing = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options);
    let answer: { status: number; retryAfterMs?: number } | undefined;
    const stop = (): void => void outgoing.destroy();
    signal.addEventListener('abort', stop, { once: true });
    // Called once the exchange is over, however it ended; the first call settles the promise.
    const done = (error?: unknown): void => {
      signal.removeEventListener('abort', stop);
      outgoing.destroy();
      if (answer !== undefined && !signal.aborted) resolve(answer);
      else reject(error instanceof Error ? error : new Error('the connection closed before a response'));
    };
    outgoing.on('error', done);
    outgoing.on('close', () => done());
    outgoing.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const retryAfterMs =
        status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
      answer = retryAfterMs === undefined ? { status } : { status, retryAfterMs };
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= MAX_BODY_BYTES) done();
      });
      response.on('end', () => done());
      response.on('close', () => done());
      response.on('error', done);
    });
    outgoing.end(request.body);
  });
}

/** Retry-After as delta-seconds or an HTTP-date, in ms from now, at most a day; undefined when malformed. */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let delayMs: number;
  if (/^\d{1,10}$/.test(text)) delayMs = Number(text) * 1000;
  else if (text.length <= 64 && HTTP_DATE_DAYS.includes(text.slice(0, 3))) delayMs = Date.parse(text) - Date.now();
  else return undefined;
  return Number.isNaN(delayMs) ? undefined : Math.min(Math.max(delayMs, 0), MAX_RETRY_AFTER_MS);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
