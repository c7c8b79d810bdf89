#!/usr/bin/env node
// npm run test:e2e                                   the e2e suites on SQLite and MySQL/MariaDB, services started by the tests
// E2E_TOKEN=psk_… npm run test:e2e -- --base-url URL  the HTTP e2e suite against a running deployment
//
// Any other argument goes to Vitest unchanged (a file filter, -t pattern, --reporter …). Against a
// deployment the tests tagged `database` (direct database access, or an empty database) and
// `instance` (a service of their own: its environment, logs, signals, injected faults) are left out,
// and Vitest lists them as skipped.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

function usage(message) {
  process.stderr.write(
    `test:e2e: ${message}\nusage: E2E_TOKEN=<admin API key> npm run test:e2e -- --base-url https://host[/prefix]\n`,
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const passThrough = [];
let baseUrl;
for (let index = 0; index < args.length; index++) {
  const arg = args[index];
  if (arg === '--base-url') {
    baseUrl = args[++index];
    if (baseUrl === undefined || baseUrl.startsWith('--')) usage('--base-url needs a URL');
  } else if (arg.startsWith('--base-url=')) {
    baseUrl = arg.slice('--base-url='.length);
  } else {
    passThrough.push(arg);
  }
}

const env = { ...process.env };
let vitestArgs;
if (baseUrl === undefined) {
  delete env.E2E_BASE_URL;
  vitestArgs = ['run', '--project', 'e2e-sqlite', '--project', 'e2e-mysql', ...passThrough];
} else {
  let url;
  try {
    url = new URL(baseUrl);
  } catch {
    usage(`--base-url ${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') usage('--base-url must be an http: or https: URL');
  if (url.search !== '' || url.hash !== '') usage('--base-url takes no query string or fragment');
  if (!process.env.E2E_TOKEN) usage('set E2E_TOKEN to an admin API key of the deployment');
  env.E2E_BASE_URL = url.href.replace(/\/+$/, '');
  vitestArgs = ['run', '--project', 'e2e-remote', '--tags-filter', '!database && !instance', ...passThrough];
}

const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const result = spawnSync(process.execPath, [vitest, ...vitestArgs], { stdio: 'inherit', env });
if (result.error) throw result.error;
process.exit(result.status ?? 1);
