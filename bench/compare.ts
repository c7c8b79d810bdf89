import type autocannon from 'autocannon';
import { loadProblems, runLoad, type LoadResult } from './load.js';
import { formatNumber, print, printLoud } from './output.js';
import { cpuSeconds, sleep, type ChildServer } from './processes.js';

/** One side of an A/B comparison: a server and the requests it gets. */
export interface Contender {
  /** `service`, `B0`, `first page` … */
  name: string;
  baseUrl: string;
  /** The server's process, whose CPU time per request is reported. */
  pid: number;
  requests: autocannon.Request[];
}

export function contender(name: string, server: ChildServer, requests: autocannon.Request[]): Contender {
  return { name, baseUrl: server.baseUrl, pid: server.pid, requests };
}

export interface RunSettings {
  apiKey: string;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  rounds: number;
  /** Fixed request rate over all connections; unlimited when absent. */
  overallRate?: number;
}

export interface Medians {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  serverCpuMsPerRequest: number;
}

export interface SideResult {
  name: string;
  warmup: LoadResult;
  rounds: LoadResult[];
  median: Medians;
}

export interface Comparison {
  a: SideResult;
  b: SideResult;
  /** Further sides measured in the same rounds (the framework floor F of get and create --floor). */
  more?: SideResult[];
  /** Non-2xx responses and errors of the measured rounds; any makes the comparison worthless. */
  problems: string[];
}

// Lets sockets close and the servers settle between runs.
const PAUSE_MS = 1_000;

/**
 * Warms A up, then B (then any further side), then measures the rounds, alternating the order (A B,
 * B A, A B …; with a third side A B C, C B A …): the sides never run at the same time, and slow drift
 * of the machine (other load, thermal state) touches them alike.
 */
export async function compareAlternating(
  a: Contender,
  b: Contender,
  settings: RunSettings,
  more: Contender[] = [],
): Promise<Comparison> {
  const contenders = [a, b, ...more];
  const problems: string[] = [];
  const warmups = new Map<Contender, LoadResult>();
  for (const contender of contenders) {
    const result = await measure(contender, settings, settings.warmupSeconds, 'warm-up');
    const problem = loadProblems(result);
    if (problem !== undefined) printLoud([`${contender.name} during warm-up: ${problem}`]);
    warmups.set(contender, result);
  }
  const rounds = new Map<Contender, LoadResult[]>(contenders.map((contender) => [contender, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    // A B, B A, A B …: a drift during the run favours no side.
    for (const contender of round % 2 === 1 ? contenders : [...contenders].reverse()) {
      const result = await measure(contender, settings, settings.durationSeconds, `round ${round}`);
      const problem = loadProblems(result);
      if (problem !== undefined) {
        const message = `${contender.name}, round ${round}: ${problem}`;
        printLoud([message, 'This round measured failures, not the service: the comparison is INVALID.']);
        problems.push(message);
      }
      rounds.get(contender)!.push(result);
    }
  }
  const side = (contender: Contender): SideResult => ({
    name: contender.name,
    warmup: warmups.get(contender)!,
    rounds: rounds.get(contender)!,
    median: medians(rounds.get(contender)!),
  });
  return { a: side(a), b: side(b), ...(more.length > 0 ? { more: more.map(side) } : {}), problems };
}

/** The failures a side's measured rounds saw, one line per round. */
export function sideProblems(side: SideResult): string[] {
  return side.rounds.flatMap((round, index) => {
    const problem = loadProblems(round);
    return problem === undefined ? [] : [`${side.name}, round ${index + 1}: ${problem}`];
  });
}

/** One run of one contender, printed as one line. */
export async function measure(
  contender: Contender,
  settings: RunSettings,
  durationSeconds: number,
  label: string,
): Promise<LoadResult> {
  return (await measureWindow(contender, settings, durationSeconds, label)).result;
}

/** Like measure(), with when the load ran: microseconds of the monotonic clock (as in a V8 CPU profile). */
export async function measureWindow(
  contender: Contender,
  settings: RunSettings,
  durationSeconds: number,
  label: string,
): Promise<{ result: LoadResult; window: { startUs: number; endUs: number } }> {
  await sleep(PAUSE_MS);
  const startUs = monotonicMicroseconds();
  const cpuBefore = cpuSeconds(contender.pid);
  const load = await runLoad({
    baseUrl: contender.baseUrl,
    apiKey: settings.apiKey,
    connections: settings.connections,
    durationSeconds,
    requests: contender.requests,
    overallRate: settings.overallRate,
  });
  const result = { ...load, serverCpuMsPerRequest: ((cpuSeconds(contender.pid) - cpuBefore) * 1000) / load.responses };
  const endUs = monotonicMicroseconds();
  print(`    ${label.padEnd(9)} ${contender.name.padEnd(12)} ${describeRun(result)}`);
  return { result, window: { startUs, endUs } };
}

// process.hrtime is CLOCK_MONOTONIC on Linux, the clock of V8's profile timestamps in every process.
function monotonicMicroseconds(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export function describeRun(result: LoadResult): string {
  const failures = result.non2xx + result.errors;
  return [
    `${formatNumber(result.requestsPerSecond).padStart(7)} req/s`,
    `p50 ${formatNumber(result.latencyP50Ms, 1).padStart(6)} ms`,
    `p99 ${formatNumber(result.latencyP99Ms, 1).padStart(6)} ms`,
    ...(result.serverCpuMsPerRequest === undefined
      ? []
      : [`CPU ${formatNumber(result.serverCpuMsPerRequest, 2)} ms/req`]),
    `${formatNumber(result.responses)} responses`,
    failures === 0 ? 'all 2xx' : `${result.non2xx} non-2xx, ${result.errors} errors`,
  ].join('  ');
}

/** A scenario's result: every side's medians, their failures, then `outcome` (ratio, target, verdict). */
export function printComparison(scenario: string, comparison: Comparison, outcome: string | string[]): void {
  print(`  => ${scenario}, medians of ${comparison.a.rounds.length} round(s):`);
  for (const side of [comparison.a, comparison.b, ...(comparison.more ?? [])]) {
    const { median: value, rounds } = side;
    const non2xx = rounds.reduce((sum, round) => sum + round.non2xx, 0);
    const errors = rounds.reduce((sum, round) => sum + round.errors, 0);
    const figures = [
      `${formatNumber(value.requestsPerSecond).padStart(7)} req/s`,
      `p50 ${formatNumber(value.latencyP50Ms, 1).padStart(6)} ms`,
      `p99 ${formatNumber(value.latencyP99Ms, 1).padStart(6)} ms`,
      `CPU ${formatNumber(value.serverCpuMsPerRequest, 2)} ms/req`,
      `${non2xx} non-2xx, ${errors} errors`,
    ];
    print(`     ${side.name.padEnd(12)} ${figures.join('  ')}`);
  }
  for (const line of typeof outcome === 'string' ? [outcome] : outcome) print(`     ${line}`);
}

export function medians(results: LoadResult[]): Medians {
  return {
    requestsPerSecond: median(results.map((result) => result.requestsPerSecond)),
    latencyP50Ms: median(results.map((result) => result.latencyP50Ms)),
    latencyP99Ms: median(results.map((result) => result.latencyP99Ms)),
    serverCpuMsPerRequest: median(results.map((result) => result.serverCpuMsPerRequest ?? NaN)),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
