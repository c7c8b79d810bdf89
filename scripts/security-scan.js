#!/usr/bin/env node
// npm run test:security    an SQL injection scan of the HTTP API with sqlmap, level 5 / risk 3
//
// Builds the service, creates a throwaway MySQL/MariaDB database (server from TEST_MYSQL_URL,
// default mysql://root@127.0.0.1:3306), starts `node dist/src/main.js` on a free loopback port with a
// generated admin key, creates the posts to aim at, and runs one sqlmap per parameter: the path id of
// GET/PUT/PATCH/DELETE /posts/{id} and the revision number of GET /posts/{id}/revisions/{version},
// every query parameter of GET /posts (status included), every JSON body field of POST, PUT and
// PATCH, the Idempotency-Key header of POST /posts, the query parameters of GET /events, and the url,
// description and path id of the webhooks routes. Several sqlmap processes run at
// once (sqlmap's --threads does not parallelise its detection phase): about 310,000 requests and 25
// minutes on two busy cores.
//
// Fails (exit 1) when sqlmap reports an injection point, when sqlmap errs or could not finish a
// target, when the service answers any 5xx (GET /metrics before and after, and every response in
// sqlmap's traffic log), logs an unexpected error or an SQL error, or dies. Prints per target:
// sqlmap's HTTP requests, their status codes, the duration and the verdict; then the totals. The
// service and the database are always stopped and dropped on the way out, signals included.
//
// Environment (all optional):
//   TEST_MYSQL_URL           MySQL/MariaDB server to create the database on (its path is ignored)
//   SECURITY_SCAN_JOBS       sqlmap processes at once (default 4)
//   SECURITY_SCAN_TARGETS    only the targets whose name contains this text (e.g. "PATCH", "cursor")
//   SECURITY_SCAN_RETRIES    reruns of a target whose scan sqlmap cut short (default 1; see below)
//   SECURITY_SCAN_KEEP=1     keep the work directory (sqlmap logs, traffic, service log)
//   SQLMAP                   the sqlmap command (default: sqlmap)
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Buffer } from 'node:buffer';
import mysql from 'mysql2/promise';

const SQLMAP = process.env.SQLMAP || 'sqlmap';
const JOBS = positiveInteger('SECURITY_SCAN_JOBS', 4);
const RETRIES = positiveInteger('SECURITY_SCAN_RETRIES', 1, 0);
const ONLY = process.env.SECURITY_SCAN_TARGETS || '';
const KEEP = process.env.SECURITY_SCAN_KEEP === '1';
const TIME_SEC = 2;
// Every refusal the API gives on purpose: sqlmap must compare these pages, not stop or discard them.
// 401 and 429 are left out on purpose: either means the scan itself is misconfigured.
const IGNORE_CODES = '400,403,404,409,412,415,422,428';

const root = new URL('..', import.meta.url).pathname;
const started = Date.now();
const children = new Set(); // process groups to stop on the way out
let service; // { child, port, base, log }
let database; // { name, connection options }
let workDir;
let cleaningUp;

function positiveInteger(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) usage(`${name} must be a whole number >= ${min}`);
  return Number(raw);
}

function usage(message) {
  process.stderr.write(`test:security: ${message}\n`);
  process.exit(2);
}

function say(line = '') {
  process.stdout.write(`${line}\n`);
}

function loud(line) {
  process.stderr.write(`\n!!! test:security: ${line}\n`);
}

function formatDuration(ms) {
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

// ---------------------------------------------------------------------------------------------------
// Clean-up: the service, every sqlmap, the database and the work directory, whatever happens.

async function stopGroup(child, graceMs) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timedOut = await Promise.race([exited.then(() => false), sleep(graceMs).then(() => true)]);
  if (timedOut) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await Promise.race([exited, sleep(2000)]);
  }
}

async function cleanUp() {
  cleaningUp ??= (async () => {
    await Promise.all([...children].map((child) => stopGroup(child, 2000)));
    if (service) await stopGroup(service.child, 10000);
    if (database) {
      try {
        const connection = await mysql.createConnection(database.server);
        await connection.query(`DROP DATABASE IF EXISTS \`${database.name}\``);
        await connection.end();
      } catch (error) {
        loud(`could not drop database ${database.name}: ${error.message}`);
      }
    }
    if (workDir && !KEEP) rmSync(workDir, { recursive: true, force: true });
    if (workDir && KEEP) say(`work directory kept: ${workDir}`);
  })();
  return cleaningUp;
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.once(signal, () => {
    loud(`${signal}: stopping sqlmap and the service, dropping the database`);
    void cleanUp().finally(() => process.exit(code));
  });
}

// ---------------------------------------------------------------------------------------------------
// Small HTTP client (the scripts run without DOM globals).

function call(method, path, { token, headers = {}, body } = {}) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const allHeaders = { ...headers };
  if (token) allHeaders.Authorization = `Bearer ${token}`;
  if (payload) {
    allHeaders['Content-Type'] = 'application/json';
    allHeaders['Content-Length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: service.port, method, path, headers: allHeaders, timeout: 30000 },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode, headers: res.headers, text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

async function expectJson(method, path, status, options) {
  const res = await call(method, path, options);
  if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status}, not ${status}: ${res.text}`);
  return { ...res, json: res.text === '' ? undefined : JSON.parse(res.text) };
}

/** http_requests_total by "METHOD route status", /metrics itself left out. */
async function requestCounters() {
  const res = await call('GET', '/metrics');
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  const counters = new Map();
  for (const line of res.text.split('\n')) {
    const match = /^http_requests_total\{(.*)\} (\d+(?:\.\d+)?(?:e\+\d+)?)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.route === '/metrics') continue;
    counters.set(`${labels.method} ${labels.route} ${labels.status}`, Number(match[2]));
  }
  return counters;
}

function counterDifference(before, after) {
  const difference = new Map();
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta > 0) difference.set(key, delta);
  }
  return difference;
}

// ---------------------------------------------------------------------------------------------------
// Setup: build, database, service, fixtures.

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function sqlmapVersion() {
  const result = spawnSync(SQLMAP, ['--version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return undefined;
  return /^\S+/.exec(result.stdout.trim())?.[0];
}

async function createDatabase() {
  const serverUrl = new URL(process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/test');
  const server = {
    host: serverUrl.hostname,
    port: Number(serverUrl.port || 3306),
    user: decodeURIComponent(serverUrl.username || 'root'),
    password: decodeURIComponent(serverUrl.password),
  };
  const name = `posts_security_${process.pid}`;
  let connection;
  try {
    connection = await mysql.createConnection(server);
  } catch (error) {
    throw new Error(`no MySQL/MariaDB server answers at ${server.host}:${server.port} (${error.message})`, {
      cause: error,
    });
  }
  await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await connection.query(`CREATE DATABASE \`${name}\``);
  await connection.end();
  database = { name, server };
  const credentials = serverUrl.password ? `${serverUrl.username}:${serverUrl.password}` : serverUrl.username;
  return `mysql://${credentials}@${server.host}:${server.port}/${name}`;
}

async function startService(databaseUrl, adminToken) {
  const port = await freePort();
  const log = join(workDir, 'service.log');
  const logFd = openSync(log, 'a');
  // A clean environment: nothing from the caller's (REDIS_URL, OAUTH_*, API_PREFIX, METRICS_TOKEN,
  // REQUIRE_IF_MATCH …) changes what is scanned.
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    BOOTSTRAP_API_KEY: adminToken,
    THROTTLE_LIMIT: '100000000',
    THROTTLE_AUTH_FAILURE_LIMIT: '100000000',
    LOG_LEVEL: 'warn',
    // Webhooks can be created (to a loopback URL) and none is ever delivered.
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    EVENTS_DELIVERY: 'false',
  };
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: root,
    env,
    detached: true, // its own process group, stopped as a whole
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  service = { child, port, base: `http://127.0.0.1:${port}`, log };
  for (let attempt = 0; attempt < 120; attempt++) {
    if (child.exitCode !== null) break;
    try {
      if ((await call('GET', '/health/ready')).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  throw new Error(`the service did not become ready on port ${port}:\n${tail(log, 40)}`);
}

function tail(file, lines) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function createFixtures(adminToken) {
  const writer = await expectJson('POST', '/api-keys', 201, {
    token: adminToken,
    body: { name: 'security scan writer', scopes: ['posts:write'] },
  });
  const post = async (title) =>
    (
      await expectJson('POST', '/posts', 201, {
        token: adminToken,
        body: { title, content: `Target of the injection scan: ${title}`, author: 'Ada' },
      })
    ).json.id;
  // One post per target that reads or writes one, so no target changes another's page.
  const ids = {};
  for (const name of ['get', 'put', 'patch', 'delete', 'put-title', 'put-content', 'put-author']) {
    ids[name] = await post(`scan ${name}`);
  }
  for (const name of ['patch-title', 'patch-content', 'patch-author']) ids[name] = await post(`scan ${name}`);
  // Three posts of an author nobody else uses: a listing of one per page has a next page, whose
  // cursor the query-parameter targets carry, and its content does not change during the scan.
  for (let index = 1; index <= 3; index++) {
    await expectJson('POST', '/posts', 201, {
      token: adminToken,
      body: { title: `listed ${index}`, content: 'Listed by the query-parameter targets', author: 'scan-list' },
    });
  }
  const first = await expectJson('GET', '/posts?limit=1&author=scan-list&order=desc&count=true', 200, {
    token: adminToken,
  });
  const next = /<([^>]+)>;\s*rel="next"/.exec(first.headers.link ?? '')?.[1];
  const cursor = next && new URL(next, service.base).searchParams.get('cursor');
  if (!cursor) throw new Error(`GET /posts?limit=1 gave no next link: ${first.headers.link}`);
  // The cursor belongs to its author and order: with another author or order the answer is a 400
  // before any SQL runs, so the author and order targets go without it (a first page).
  const listing = `limit=1&cursor=${encodeURIComponent(cursor)}&author=scan-list&order=desc&count=true&status=published`;
  const firstPage = 'limit=1&author=scan-list&order=desc&count=true&status=published';
  for (const query of [listing, firstPage]) await expectJson('GET', `/posts?${query}`, 200, { token: adminToken });
  // A revision (version 1) of the GET target, for the revision target: a patch that keeps its text.
  await expectJson('PATCH', `/posts/${ids.get}`, 200, { token: adminToken, body: { status: 'published' } });
  ids.webhook = (
    await expectJson('POST', '/webhooks', 201, {
      token: adminToken,
      body: { url: 'http://127.0.0.1:9/scan', events: ['*'], description: 'Target of the injection scan' },
    })
  ).json.id;
  // The creates above are in the feed: a page of it is the true page of the events targets.
  await expectJson('GET', `/events?${EVENTS_QUERY}`, 200, { token: adminToken });
  return { writerToken: writer.json.token, ids, listing, firstPage };
}

// ---------------------------------------------------------------------------------------------------
// The targets: one sqlmap run per parameter, marked with sqlmap's custom injection marker `*`.
//
// Each target names the text that a "true" page carries (sqlmap's --string): the post asked for, the
// created post, the listed post, the 403 of the writer's DELETE. sqlmap's default, a fuzzy similarity
// of the whole page, is fooled by this API's 400 bodies, which echo the request path (payload
// included) in `instance`: it then reports boolean-based "candidates" in every direction, rejects them
// as false positives, and stops testing the parameter with most of the level 5 set not run. A real
// injection still shows: the true condition finds the row (the string is there), the false one does
// not, and error, UNION, stacked and time-based tests do not use this comparison at all.

// The feed from its start, one post.created event per page.
const EVENTS_QUERY = 'after=0&limit=1&type=post.created';

function targets({ adminToken, writerToken, ids, listing, firstPage }) {
  const json = 'Content-Type: application/json';
  const body = (fields, marked) =>
    JSON.stringify(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, k === marked ? `${v}*` : v])));
  const fields = { title: 'Hello', content: 'Body text', author: 'Ada' };
  // Minutes each took on the last measured run (4 at a time): the longest start first.
  const weight = { title: 6, content: 5, author: 3.5 };
  const thePost = (id) => `"id":${id},"title":`;
  const list = [
    // The id in the path. Their JSON bodies are sent as they are (answer N to sqlmap's "JSON data
    // found … process it?", which would otherwise mark every field too: the body targets below).
    { name: 'GET /posts/{id} · id', method: 'GET', path: `/posts/${ids.get}*`, string: thePost(ids.get) },
    {
      name: 'GET /posts/{id}/revisions/{version} · version',
      method: 'GET',
      path: `/posts/${ids.get}/revisions/1*`,
      string: '"version":1,',
    },
    {
      name: 'PUT /posts/{id} · id',
      method: 'PUT',
      path: `/posts/${ids.put}*`,
      data: JSON.stringify(fields),
      headers: [json],
      answers: ['JSON data found=N'],
      string: thePost(ids.put),
    },
    {
      name: 'PATCH /posts/{id} · id',
      method: 'PATCH',
      path: `/posts/${ids.patch}*`,
      data: JSON.stringify({ title: 'Patched' }),
      headers: [json],
      answers: ['JSON data found=N'],
      string: thePost(ids.patch),
    },
    // A writer deleting an admin's post: a stable 403 after a DELETE and a SELECT by id, on a row that
    // stays (an admin's DELETE would answer 204 once and 404 ever after).
    {
      name: 'DELETE /posts/{id} · id',
      method: 'DELETE',
      path: `/posts/${ids.delete}*`,
      token: writerToken,
      string: '"status":403,',
    },
  ];
  for (const parameter of ['limit', 'cursor', 'author', 'order', 'count', 'status']) {
    // The cursor belongs to its author, order and status: those targets go without it.
    const query = ['author', 'order', 'status'].includes(parameter) ? firstPage : listing;
    const marked = query.replace(new RegExp(`(^|&)(${parameter}=[^&]*)`), '$1$2*');
    list.push({
      name: `GET /posts · ${parameter}`,
      method: 'GET',
      path: `/posts?${marked}`,
      string: '"author":"scan-list"',
    });
  }
  for (const field of Object.keys(fields)) {
    list.push({
      name: `POST /posts · ${field}`,
      method: 'POST',
      path: '/posts',
      data: body(fields, field),
      string: '"createdAt":"',
      weight: weight[field] + 1,
    });
  }
  for (const method of ['PUT', 'PATCH']) {
    for (const field of Object.keys(fields)) {
      const id = ids[`${method.toLowerCase()}-${field}`];
      list.push({
        name: `${method} /posts/{id} · ${field}`,
        method,
        path: `/posts/${id}`,
        data: body(fields, field),
        string: thePost(id),
        weight: weight[field],
      });
    }
  }
  for (const parameter of ['after', 'limit', 'type']) {
    list.push({
      name: `GET /events · ${parameter}`,
      method: 'GET',
      path: `/events?${EVENTS_QUERY.replace(new RegExp(`(^|&)(${parameter}=[^&]*)`), '$1$2*')}`,
      string: '"type":"post.created"',
    });
  }
  const webhook = { url: 'http://127.0.0.1:9/scan', description: 'Scanned' };
  for (const field of Object.keys(webhook)) {
    list.push({
      name: `POST /webhooks · ${field}`,
      method: 'POST',
      path: '/webhooks',
      // Not events: ["*"]: sqlmap would take that * for an injection marker too.
      data: JSON.stringify({ ...JSON.parse(body(webhook, field)), events: ['post.created'] }),
      string: '"secret":"whsec_',
    });
  }
  list.push({
    name: 'GET /webhooks/{id} · id',
    method: 'GET',
    path: `/webhooks/${ids.webhook}*`,
    string: `"id":${ids.webhook},`,
  });
  // Idempotency-Key refuses spaces (400 before any SQL), so the payloads' spaces become /**/ comments:
  // the same payloads then reach the idempotency store's queries.
  list.push({
    name: 'POST /posts · Idempotency-Key',
    method: 'POST',
    path: '/posts',
    data: JSON.stringify(fields),
    headers: [json, 'Idempotency-Key: scan-key-1*'],
    answers: ['JSON data found=N'],
    extra: ['--tamper=space2comment'],
    string: '"createdAt":"',
    weight: 4.5,
  });
  return list
    .filter((target) => target.name.includes(ONLY))
    .map((target, index) => ({
      ...target,
      token: target.token ?? adminToken,
      // A fixed X-Request-Id keeps the problem bodies free of a random UUID and names the target in
      // the service log.
      requestId: `scan-${index + 1}`,
    }));
}

function sqlmapArguments(target, directory) {
  const headers = [
    `Authorization: Bearer ${target.token}`,
    `X-Request-Id: ${target.requestId}`,
    ...(target.headers ?? []),
  ];
  return [
    '-u',
    `${service.base}${target.path}`,
    '--method',
    target.method,
    ...(target.data === undefined ? [] : ['--data', target.data]),
    '--headers',
    headers.join('\n'),
    '--dbms=MySQL',
    '--level=5',
    '--risk=3',
    '--batch',
    '--flush-session',
    '--output-dir',
    join(directory, 'output'),
    '-t',
    join(directory, 'traffic.txt'),
    `--time-sec=${TIME_SEC}`,
    // Only used once an injection is found (data retrieval); detection is one request at a time,
    // hence several sqlmap processes at once.
    '--threads=4',
    `--ignore-code=${IGNORE_CODES}`,
    '--skip-waf',
    `--string=${target.string}`,
    '--disable-coloring',
    // "reduce the number of requests" (batch default Y) would skip every UNION test beyond 10
    // columns: N keeps the whole level 5 set.
    `--answers=${['reduce the number of requests=N', ...(target.answers ?? [])].join(',')}`,
    ...(target.extra ?? []),
  ];
}

function runSqlmap(target, directory) {
  mkdirSync(directory, { recursive: true });
  const logFile = join(directory, 'sqlmap.log');
  const logFd = openSync(logFile, 'w');
  return new Promise((resolve) => {
    const child = spawn(SQLMAP, sqlmapArguments(target, directory), {
      cwd: directory,
      // sqlmap's own state (history, default output) stays in the work directory.
      env: { ...process.env, HOME: directory },
      detached: true,
      stdio: ['ignore', logFd, logFd],
    });
    closeSync(logFd);
    children.add(child);
    child.once('error', (error) => {
      children.delete(child);
      resolve({ exitCode: null, error: error.message, logFile });
    });
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ exitCode: code, signal, logFile });
    });
  });
}

/** What one sqlmap run reports: requests and their statuses, injection points, errors. */
function analyse(directory, run) {
  const log = readFileSync(run.logFile, 'utf8');
  const statuses = new Map();
  const serverErrors = [];
  let requests = 0;
  const trafficFile = join(directory, 'traffic.txt');
  if (existsSync(trafficFile)) {
    for (const block of readFileSync(trafficFile, 'utf8').split(/\r?\n#{76}\r?\n/)) {
      if (!/^\s*HTTP request \[#\d+\]:/.test(block)) continue;
      requests++;
      const status = /^HTTP response \[#\d+\] \((\d{3})/m.exec(block)?.[1] ?? 'none';
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status.startsWith('5') && serverErrors.length < 5) {
        const request = /^HTTP request \[#\d+\]:\r?\n([\s\S]*?)\r?\n\r?\nHTTP response \[#\d+\]/m.exec(block);
        serverErrors.push(request?.[1] ?? block.slice(0, 2000));
      }
    }
  }
  // Confirmed injection points: sqlmap's summary, its CSV results and the per-host log.
  const findings = [];
  const summary = /sqlmap identified the following injection point[\s\S]*?\n---\n([\s\S]*?)\n---/.exec(log);
  if (summary) findings.push(summary[1].trim());
  for (const line of log.split('\n')) {
    if (/is vulnerable\. Do you want to keep testing/.test(line) || /^Parameter: .+ \(.+\)$/.test(line.trim())) {
      if (!findings.some((finding) => finding.includes(line.trim()))) findings.push(line.trim());
    }
  }
  let truncated = /false positive or unexploitable injection point detected/.test(log);
  const outputDir = join(directory, 'output');
  if (existsSync(outputDir)) {
    for (const file of readdirSync(outputDir).filter((name) => name.startsWith('results-') && name.endsWith('.csv'))) {
      for (const row of readFileSync(join(outputDir, file), 'utf8').split(/\r?\n/).slice(1).filter(Boolean)) {
        if (/false positive or unexploitable/.test(row)) truncated = true;
        else findings.push(`CSV: ${row}`);
      }
    }
  }
  const lines = log.split('\n').map((line) => line.replace(/\r/g, '').trim());
  const critical = lines.filter((line) => /\[CRITICAL\]/.test(line));
  const finished = /(do not appear to be injectable|does not seem to be injectable)/.test(log);
  const candidates = lines.filter((line) => /appears to be '.+' injectable/.test(line));
  const errors = [...critical];
  if (run.error) errors.push(`could not run ${SQLMAP}: ${run.error}`);
  else if (run.exitCode !== 0) errors.push(`sqlmap exited with ${run.exitCode ?? run.signal}`);
  if (!finished && findings.length === 0) errors.push('sqlmap did not report the end of its tests');
  if (requests === 0) errors.push('sqlmap sent no request');
  return { requests, statuses, serverErrors, findings, truncated, candidates, errors, log };
}

async function scan(target, number, total) {
  const targetStarted = Date.now();
  const attempts = [];
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    const directory = join(workDir, `target-${number}`, `attempt-${attempt + 1}`);
    const run = await runSqlmap(target, directory);
    if (cleaningUp) return undefined;
    const result = analyse(directory, run);
    attempts.push(result);
    // A candidate that sqlmap then rejects ends its tests of that parameter with the candidate's
    // boundaries only: the rest of the level 5 set never ran. Run the target again.
    const cutShort = result.truncated && result.findings.length === 0;
    if (!cutShort || result.errors.length > 0 || result.serverErrors.length > 0) break;
    if (attempt < RETRIES) say(`      ${target.name}: sqlmap rejected a candidate and stopped early; running it again`);
  }
  const last = attempts[attempts.length - 1];
  const statuses = new Map();
  for (const attempt of attempts) {
    for (const [status, count] of attempt.statuses) statuses.set(status, (statuses.get(status) ?? 0) + count);
  }
  const result = {
    target,
    attempts: attempts.length,
    requests: attempts.reduce((sum, attempt) => sum + attempt.requests, 0),
    statuses,
    serverErrors: attempts.flatMap((attempt) => attempt.serverErrors),
    findings: attempts.flatMap((attempt) => attempt.findings),
    candidates: attempts.flatMap((attempt) => attempt.candidates),
    errors: attempts.flatMap((attempt) => attempt.errors),
    incomplete: last.truncated && last.findings.length === 0,
    durationMs: Date.now() - targetStarted,
    logTail: last.log.split('\n').slice(-25).join('\n'),
  };
  result.fiveHundreds = [...statuses].filter(([status]) => status.startsWith('5')).reduce((s, [, n]) => s + n, 0);
  result.verdict =
    result.findings.length > 0
      ? 'INJECTABLE'
      : result.fiveHundreds > 0
        ? '5xx'
        : result.errors.length > 0
          ? 'SQLMAP ERROR'
          : result.incomplete
            ? 'INCOMPLETE'
            : 'pass';
  say(
    `[${String(number).padStart(2)}/${total}] ${result.verdict.padEnd(12)} ${target.name.padEnd(32)} ` +
      `${String(result.requests).padStart(6)} requests  ${formatDuration(result.durationMs).padStart(6)}` +
      (result.attempts > 1 ? `  (${result.attempts} runs)` : ''),
  );
  return result;
}

/** Runs worker over items, `concurrency` at a time, the heaviest (item.weight) first. */
async function pool(items, concurrency, worker) {
  const results = new Array(items.length);
  const order = items.map((_, index) => index).sort((a, b) => (items[b].weight ?? 1) - (items[a].weight ?? 1));
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (order.length > 0 && !cleaningUp) {
      const index = order.shift();
      results[index] = await worker(items[index], index);
    }
  });
  await Promise.all(lanes);
  return results;
}

// ---------------------------------------------------------------------------------------------------
// Reporting.

function redact(text, tokens) {
  return tokens.reduce((result, token) => result.split(token).join('$TOKEN'), text);
}

/** A curl command for one raw request from sqlmap's traffic log, against $BASE with $TOKEN. */
function reproducer(rawRequest) {
  const lines = rawRequest.split(/\r?\n/);
  const [method, path] = lines[0].split(' ');
  const blank = lines.indexOf('');
  const headerLines = (blank === -1 ? lines.slice(1) : lines.slice(1, blank)).filter(
    (line) => !/^(User-agent|Referer|Host|Accept|Accept-encoding|Content-length|Connection|Cache-control):/i.test(line),
  );
  const body = blank === -1 ? '' : lines.slice(blank + 1).join('\n');
  const quote = (value) => `'${value.replace(/'/g, `'\\''`)}'`;
  return [
    `curl -i -X ${method} "$BASE"${quote(path)}`,
    ...headerLines.map((line) =>
      /^Authorization:/i.test(line) ? '-H "Authorization: Bearer $TOKEN"' : `-H ${quote(line)}`,
    ),
    ...(body ? [`--data-raw ${quote(body)}`] : []),
  ].join(' \\\n    ');
}

/** The service log's error-level lines, SQL errors and 5xx answers: none is expected. */
function serviceErrors() {
  const unexpected = [];
  for (const line of readFileSync(service.log, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue; // not a log line
    }
    const sqlError = /SQL syntax|ER_PARSE_ERROR|ER_BAD_FIELD_ERROR/i.test(line);
    if (!(entry.level >= 50 || entry.res?.statusCode >= 500 || sqlError)) continue;
    unexpected.push(entry);
  }
  return { unexpected };
}

async function main() {
  const version = sqlmapVersion();
  if (!version) {
    usage(`sqlmap is not installed (no "${SQLMAP}" command): apt-get install -y sqlmap, or set SQLMAP`);
  }

  say('=== build');
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');

  workDir = mkdtempSync(join(tmpdir(), 'posts-security-'));
  const { generateApiKeyToken } = await import(pathToFileURL(join(root, 'dist/src/auth/api-keys/api-key-token.js')));
  const adminToken = generateApiKeyToken();

  say('=== database and service');
  const databaseUrl = await createDatabase();
  await startService(databaseUrl, adminToken);
  say(`database ${database.name}; service on ${service.base} (pid ${service.child.pid})`);
  const fixtures = await createFixtures(adminToken);
  const list = targets({ adminToken, ...fixtures });
  if (list.length === 0) throw new Error(`no target name contains ${JSON.stringify(ONLY)}`);
  const tokens = [adminToken, fixtures.writerToken];

  say(
    `=== sqlmap ${version}: ${list.length} targets, --level 5 --risk 3 --dbms=MySQL --time-sec=${TIME_SEC}, ` +
      `${JOBS} at a time${ONLY ? ` (only the targets containing ${JSON.stringify(ONLY)})` : ''}`,
  );
  const scanStarted = Date.now();
  const before = await requestCounters();
  const results = await pool(list, JOBS, (target, index) => scan(target, index + 1, list.length));
  if (cleaningUp) return 1;
  const serviceAlive = service.child.exitCode === null && service.child.signalCode === null;
  const after = serviceAlive ? await requestCounters() : new Map();
  const scanMs = Date.now() - scanStarted;

  // Per target.
  say('\n=== summary');
  say(`${'target'.padEnd(32)} ${'requests'.padStart(8)} ${'duration'.padStart(8)}  verdict       statuses`);
  for (const result of results) {
    const statuses = [...result.statuses]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]) => `${status}×${count}`)
      .join(' ');
    say(
      `${result.target.name.padEnd(32)} ${String(result.requests).padStart(8)} ${formatDuration(result.durationMs).padStart(8)}  ` +
        `${result.verdict.padEnd(13)} ${statuses}${result.attempts > 1 ? ` (${result.attempts} runs)` : ''}`,
    );
  }

  // Service side.
  const served = counterDifference(before, after);
  const servedTotal = [...served.values()].reduce((sum, n) => sum + n, 0);
  const served5xx = [...served].filter(([key]) => / 5\d\d$/.test(key));
  const logged = serviceErrors();
  const sqlmapTotal = results.reduce((sum, result) => sum + result.requests, 0);
  const failed = results.filter((result) => result.verdict !== 'pass');

  say('');
  say(
    `total: ${results.length} targets, ${sqlmapTotal} sqlmap requests (the service counted ${servedTotal}), ` +
      `${served5xx.reduce((sum, [, n]) => sum + n, 0)} 5xx, ` +
      `${results.reduce((sum, result) => sum + result.findings.length, 0)} injection points; ` +
      `scan ${formatDuration(scanMs)}, all ${formatDuration(Date.now() - started)}`,
  );

  // Details of every problem, with reproducers.
  for (const result of failed) {
    loud(`${result.target.name}: ${result.verdict}`);
    const command = [SQLMAP, ...sqlmapArguments(result.target, '$WORKDIR')]
      .map((arg) => (/^[\w./:=,$-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`))
      .join(' ');
    process.stderr.write(`sqlmap command: ${redact(command, tokens)}\n`);
    for (const finding of result.findings) process.stderr.write(`injection point:\n${finding}\n`);
    for (const request of result.serverErrors) {
      process.stderr.write(
        `a request answered with 5xx; reproduce against a service (BASE=http://127.0.0.1:3000 TOKEN=<admin key>) with:\n${redact(reproducer(request), tokens)}\n`,
      );
    }
    for (const error of result.errors) process.stderr.write(`sqlmap: ${error}\n`);
    if (result.incomplete) {
      process.stderr.write(
        `sqlmap rejected a candidate injection point as a false positive in each of ${result.attempts} runs and so did not finish the level 5 set for this parameter:\n${result.candidates.join('\n')}\n`,
      );
    }
    if (result.errors.length > 0 || result.incomplete)
      process.stderr.write(`last lines of sqlmap:\n${result.logTail}\n`);
  }
  if (served5xx.length > 0) {
    loud(`the service answered 5xx during the scan: ${served5xx.map(([key, n]) => `${key} ×${n}`).join(', ')}`);
  }
  if (logged.unexpected.length > 0) {
    loud(`the service logged ${logged.unexpected.length} error(s) or 5xx; the first ones:`);
    for (const entry of logged.unexpected.slice(0, 10)) {
      process.stderr.write(`${redact(JSON.stringify(entry), tokens)}\n`);
    }
  }
  if (!serviceAlive) loud(`the service died during the scan:\n${tail(service.log, 40)}`);

  const ok = failed.length === 0 && served5xx.length === 0 && logged.unexpected.length === 0 && serviceAlive;
  say(ok ? '\ntest:security passed: no injection point, no 5xx' : '\ntest:security FAILED');
  return ok ? 0 : 1;
}

let exitCode;
try {
  exitCode = await main();
} catch (error) {
  loud(error instanceof Error ? (error.stack ?? error.message) : String(error));
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);
