import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from './options.js';
import { formatNumber, formatTable, print } from './output.js';
import type { ScenarioResult } from './scenarios/scenario-result.js';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  /** What `SELECT VERSION()` said, or why there is none. */
  mariadb: string;
  sqlite: string;
}

/** How one database went: seeding times, or why it was skipped. */
export interface DatabaseReport {
  database: 'sqlite' | 'mysql';
  label: string;
  skipped?: string;
  seeding: Array<{ rowsInserted: number; rowsInTable: number; seconds: number }>;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  machine: Machine;
  options: BenchOptions;
  databases: DatabaseReport[];
  scenarios: ScenarioResult[];
}

export function describeMachine(mariadb: string, sqlite: string): Machine {
  const processors = cpus();
  return {
    cpuModel: processors[0]?.model.trim() ?? 'unknown',
    cores: processors.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${platform()} ${release()}`,
    node: process.version,
    mariadb,
    sqlite,
  };
}

export function printMachine(machine: Machine): void {
  print(`Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}`);
  print(`         Node.js ${machine.node}, ${machine.mariadb}, ${machine.sqlite}`);
}

export function printSummary(results: ScenarioResult[]): void {
  print();
  print('Summary (medians; ratio = first column / second column)');
  const rows = results.map((result) => [
    result.scenario,
    result.database,
    `${result.serviceLabel} ${formatValue(result.service, result.unit)}`,
    `${result.baselineLabel} ${formatValue(result.baseline, result.unit)}`,
    formatNumber(result.ratio, 2),
    result.target ?? '-',
    result.verdict,
  ]);
  const header = ['scenario', 'database', 'service median', 'baseline median', 'ratio', 'target', 'result'];
  for (const line of formatTable(header, rows)) print(line);
}

function formatValue(value: number, unit: ScenarioResult['unit']): string {
  if (unit === 'req/s') return `${formatNumber(value)} req/s`;
  return unit === 'p99 ms' ? `p99 ${formatNumber(value, 1)} ms` : `RSS ${formatNumber(value, 1)} MiB`;
}

/** Writes bench/results/<ISO 8601 basic timestamp>.json and returns its path. */
export function writeResults(results: BenchResults): string {
  const directory = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(directory, { recursive: true });
  // ISO 8601 basic format (20261122T100000Z): no colons, so the name works on every file system.
  const stamp = results.startedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const path = join(directory, `${stamp}.json`);
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
  return path;
}
