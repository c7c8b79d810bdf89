// npm run bench: the service (production build) against raw node:http baselines. See BENCHMARKS.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { generateApiKeyToken } from '../src/auth/api-keys/api-key-token.js';
import { benchmarkDatabase } from './database-run.js';
import { probeMysql } from './databases.js';
import { stopLoad } from './load.js';
import { parseOptions, redactUrl, USAGE, UsageError, type BenchOptions } from './options.js';
import { formatSeconds, muteProgress, print, printFinal, printLoud } from './output.js';
import { stopAllChildren } from './processes.js';
import { describeMachine, printMachine, printSummary, writeResults, type DatabaseReport } from './report.js';
import type { ScenarioResult } from './scenarios/scenario-result.js';
import type { ServiceSecrets } from './servers.js';

const cleanups: Array<() => Promise<void>> = [];
let workDir: string | undefined;
let interrupted = false;

async function main(): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    process.stderr.write(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    print(USAGE);
    return 0;
  }

  const startedAt = new Date().toISOString();
  const mysqlTargets = options.databases.filter((target) => target.kind === 'mysql');
  const probes = new Map(
    await Promise.all(mysqlTargets.map(async (target) => [target, await probeMysql(target.url)] as const)),
  );
  for (const [target, probe] of probes) {
    if (target.explicit && !probe.reachable) {
      process.stderr.write(`${probe.reason}\n`);
      return 2;
    }
  }
  const firstProbe = [...probes.values()][0];
  const machine = describeMachine(
    firstProbe === undefined ? 'MariaDB not used' : firstProbe.reachable ? firstProbe.version : 'MariaDB unreachable',
    `SQLite ${sqliteVersion()}`,
  );
  printMachine(machine);
  print(
    `Settings: ${formatSeconds(options.durationSeconds)} per run, ${formatSeconds(options.warmupSeconds)} warm-up, ` +
      `${options.connections} connections, ${options.rounds} round(s), scenarios ${options.scenarios.join(', ')}` +
      (options.soakSeconds === null ? '' : `, soak ${formatSeconds(options.soakSeconds)}`) +
      (options.floor ? ', --floor' : '') +
      (options.profile ? ', --profile' : ''),
  );
  if (options.floor && !options.scenarios.some((name) => name === 'get' || name === 'create')) {
    print('--floor: only get and create measure F, and neither is run');
  }
  if (options.profile && !options.scenarios.some((name) => name === 'get' || name === 'create')) {
    print('--profile: only get and create are profiled, and neither is run');
  }

  workDir = mkdtempSync(join(tmpdir(), 'posts-bench-'));
  const secrets: ServiceSecrets = {
    apiKey: generateApiKeyToken(),
    cursorSecret: randomBytes(32).toString('base64url'),
  };
  const databases: DatabaseReport[] = [];
  const results: ScenarioResult[] = [];
  for (const target of options.databases) {
    const probe = probes.get(target);
    if (probe !== undefined && !probe.reachable) {
      print();
      print(`== MySQL scenarios skipped: ${probe.reason} ==`);
      databases.push({ database: 'mysql', label: redactUrl(target.url), skipped: probe.reason, seeding: [] });
      continue;
    }
    const run = await benchmarkDatabase(target, options, secrets, workDir, (cleanup) => cleanups.push(cleanup));
    databases.push(run.report);
    results.push(...run.results);
  }

  printSummary(results);
  const path = writeResults({
    startedAt,
    finishedAt: new Date().toISOString(),
    machine,
    options: { ...options, databases: options.databases.map((target) => ({ ...target, url: redactUrl(target.url) })) },
    databases,
    scenarios: results,
  });
  print(`Results: ${path}`);
  removeWorkDir(workDir, options.profile);
  const invalid = results.filter((result) => result.verdict === 'INVALID');
  if (invalid.length > 0) {
    printLoud([
      `${invalid.length} scenario(s) measured failures (INVALID): ${invalid.map((r) => `${r.scenario}/${r.database}`).join(', ')}`,
    ]);
    return 1;
  }
  return 0;
}

function sqliteVersion(): string {
  const database = new Database(':memory:');
  try {
    return String(database.prepare('SELECT sqlite_version()').pluck().get());
  } finally {
    database.close();
  }
}

/** The temporary directory goes, but for the CPU profiles of --profile, which stay there. */
function removeWorkDir(directory: string, keepProfiles: boolean): void {
  const profiles = keepProfiles ? readdirSync(directory).filter((name) => name.endsWith('.cpuprofile')) : [];
  if (profiles.length === 0) {
    rmSync(directory, { recursive: true, force: true });
    return;
  }
  for (const name of readdirSync(directory)) {
    if (!name.endsWith('.cpuprofile')) rmSync(join(directory, name), { recursive: true, force: true });
  }
  print(`CPU profiles kept in ${directory}: ${profiles.join(', ')}`);
}

/** Stops the load and every child, drops the databases; keeps the logs when something went wrong. */
async function cleanUp(keepLogs: boolean): Promise<void> {
  stopLoad();
  await stopAllChildren();
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => {});
  if (workDir !== undefined) {
    if (keepLogs) printFinal(`Logs kept in ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    // A second Ctrl-C does not wait: the exit handler of processes.ts kills what is left.
    if (interrupted) process.exit(130);
    interrupted = true;
    printFinal(`\n${signal}: stopping the load and every server …`);
    muteProgress();
    void cleanUp(true).finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (interrupted) return;
    process.stderr.write(
      `\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    void cleanUp(true).finally(() => process.exit(1));
  },
);
