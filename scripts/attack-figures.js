#!/usr/bin/env node
// node scripts/attack-figures.js --base-url http://127.0.0.1:3000 --token psk_…
//
// Prints what the hostile review's attacks cost a running service (RELIABILITY.md §6): header values
// built to be slow to parse, and anonymous form bodies that are huge or trickle in. It measures, it
// does not judge: the tests that pin the behaviour are test/slow-headers.e2e-spec.ts and
// test/slow-bodies.e2e-spec.ts. Every wait is bounded (--give-up seconds, 40 by default).
import { Buffer } from 'node:buffer';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    token: { type: 'string' },
    'give-up': { type: 'string', default: '40' },
  },
});
if (!options['base-url'] || !options.token) {
  process.stderr.write('usage: node scripts/attack-figures.js --base-url URL --token <posts:read+write key>\n');
  process.exit(2);
}
const baseUrl = options['base-url'].replace(/\/$/, '');
const giveUpMs = Number(options['give-up']) * 1000;
const auth = { authorization: `Bearer ${options.token}` };
const MiB = 1024 * 1024;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => `${value.toFixed(1)} ms`;

async function timed(request) {
  const start = performance.now();
  const response = await fetch(request.url, request.init);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - start };
}

async function headerCosts() {
  const created = await fetch(`${baseUrl}/posts`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'attack target', content: 'x', author: 'figures' }),
  });
  const { id } = await created.json();
  const value = (filler) => `a${filler.repeat(16_000)}b`;
  const cases = {
    'If-None-Match on GET /posts/:id': (v) => ({
      url: `${baseUrl}/posts/${id}`,
      init: { headers: { ...auth, 'if-none-match': v } },
    }),
    'If-Match on DELETE /posts/:id': (v) => ({
      url: `${baseUrl}/posts/${id}`,
      init: { method: 'DELETE', headers: { ...auth, 'if-match': v } },
    }),
    'Idempotency-Key on POST /posts': (v) => ({
      url: `${baseUrl}/posts`,
      init: {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': v },
        body: JSON.stringify({ title: 'never stored', content: 'x', author: 'figures' }),
      },
    }),
  };
  process.stdout.write('\n1. A header value of 16,000 characters (median of 5 requests)\n');
  for (const [name, build] of Object.entries(cases)) {
    const spaced = [];
    const plain = [];
    for (let round = 0; round < 5; round++) {
      spaced.push(await timed(build(value(' '))));
      plain.push(await timed(build(value('x'))));
    }
    process.stdout.write(
      `   ${name.padEnd(32)} spaces ${ms(median(spaced.map((r) => r.ms)))} (${spaced[0].status}), ` +
        `letters ${ms(median(plain.map((r) => r.ms)))} (${plain[0].status})\n`,
    );
  }

  // The review's second figure: 50 such requests at once, and what other clients see meanwhile.
  const attacks = Array.from({ length: 50 }, () => timed(cases['If-None-Match on GET /posts/:id'](value(' '))));
  const probes = [];
  const live = [];
  for (let round = 0; round < 5; round++) {
    probes.push((await timed({ url: `${baseUrl}/posts?limit=1`, init: { headers: auth } })).ms);
    live.push((await timed({ url: `${baseUrl}/health/live`, init: {} })).ms);
  }
  await Promise.all(attacks);
  process.stdout.write(
    `   during 50 of them at once: GET /posts median ${ms(median(probes))}, max ${ms(Math.max(...probes))}; ` +
      `/health/live max ${ms(Math.max(...live))}\n`,
  );
}

/** Sends a form request head, then the body `feed` writes; reports when and after how much the server answered. */
function formUpload(head, feed) {
  return new Promise((resolve) => {
    const { hostname, port, pathname } = new URL(baseUrl);
    const socket = connect({ host: hostname, port: Number(port) });
    const start = performance.now();
    let sent = 0;
    let answer = null;
    let done = false;
    const finish = (outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...outcome, answer, sent, ms: performance.now() - start });
    };
    const timer = setTimeout(() => finish({ closed: false }), giveUpMs);
    socket.on('data', (chunk) => {
      answer ??= { status: chunk.toString('latin1').slice(9, 12), afterBytes: sent, ms: performance.now() - start };
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish({ closed: true }));
    socket.write(
      `POST ${pathname.replace(/\/$/, '')}/posts HTTP/1.1\r\nHost: ${hostname}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\n${head}\r\n`,
    );
    const write = (chunk) => {
      if (done) return false;
      sent += chunk.length;
      return socket.write(chunk);
    };
    feed(write, socket, () => done);
  });
}

function drained(socket) {
  return new Promise((next) => {
    const done = () => {
      socket.off('drain', done).off('close', done);
      next();
    };
    socket.on('drain', done).on('close', done);
  });
}

function describeUpload(outcome) {
  const answered = outcome.answer
    ? `answered ${outcome.answer.status} after ${(outcome.answer.ms / 1000).toFixed(2)} s and ` +
      `${(outcome.answer.afterBytes / MiB).toFixed(1)} MiB sent`
    : `no answer within ${giveUpMs / 1000} s`;
  const closed = outcome.closed
    ? `connection closed by the server after ${(outcome.ms / 1000).toFixed(2)} s`
    : 'connection still open when the client gave up';
  return `${answered}; ${closed}; ${(outcome.sent / MiB).toFixed(1)} MiB sent in all`;
}

async function bodyCosts() {
  process.stdout.write('\n2. Anonymous form bodies\n');
  const declared = await formUpload('Content-Length: 100000000\r\n', () => undefined);
  process.stdout.write(`   Content-Length: 100000000, no body sent: ${describeUpload(declared)}\n`);

  const piece = Buffer.alloc(256 * 1024, 'a');
  const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
  const streamed = await formUpload('Transfer-Encoding: chunked\r\n', async (write, socket, isDone) => {
    for (let total = 0; total < 300 * MiB && !isDone(); total += chunk.length) {
      if (!write(chunk)) await drained(socket);
    }
    if (!isDone()) write(Buffer.from('0\r\n\r\n'));
  });
  process.stdout.write(`   300 MiB chunked, as fast as loopback takes it: ${describeUpload(streamed)}\n`);

  const slow = await formUpload('Content-Length: 100000\r\n', async (write, _socket, isDone) => {
    while (!isDone()) {
      write(Buffer.from('a'));
      await new Promise((next) => setTimeout(next, 200));
    }
  });
  process.stdout.write(`   one byte every 200 ms: ${describeUpload(slow)}\n`);
}

process.stdout.write(`attack figures against ${baseUrl}\n`);
await headerCosts();
await bodyCosts();
