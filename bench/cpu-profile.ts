// Where a server's CPU time goes, from a V8 CPU profile (`node --cpu-prof`): pure functions over the
// .cpuprofile JSON. The profile is a call tree (`nodes`, a node's parent being the node that lists it in
// `children`) and a list of samples: the node on top of the stack at each tick (`samples`), and the
// microseconds since the previous tick (`timeDeltas`, the first one since `startTime`). A sample stands
// for the time until the next one, as in Chrome's DevTools: wall time, so on a busy machine a process
// waiting for a core adds that wait to whatever it was running.
import { fileURLToPath } from 'node:url';
import { formatNumber } from './output.js';

export interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
  columnNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds of the monotonic clock (CLOCK_MONOTONIC on Linux, as process.hrtime). */
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Microseconds of the profile's clock. */
export interface TimeWindow {
  startUs: number;
  endUs: number;
}

export interface GroupTime {
  /** A package (`express`, `@nestjs/core`), `node: internals`, `app: dist/src/<dir>`, `GC`, `native/program`. */
  group: string;
  selfMs: number;
  /** Of the non-idle time. */
  percent: number;
}

export interface FunctionTime {
  functionName: string;
  /** `express/lib/response.js:120`, `dist/src/posts/posts.controller.js:88`, `node:_http_outgoing:400`. */
  location: string;
  group: string;
  selfMs: number;
  percent: number;
}

export interface StageTime {
  stage: string;
  /** Time of the samples whose stack holds at least one function of the stage (each counted once). */
  inclusiveMs: number;
  percent: number;
}

export interface ProfileBreakdown {
  /** The measured window when it lies within the profile; otherwise the whole profile. */
  scope: 'measured window' | 'whole profile';
  /** Why the whole profile was analysed, when it was. */
  scopeNote?: string;
  fromUs: number;
  toUs: number;
  samples: number;
  /** All the time the samples in scope stand for, idle included. */
  sampledMs: number;
  idleMs: number;
  /** sampledMs - idleMs: what every percentage is of. */
  busyMs: number;
  groups: GroupTime[];
  functions: FunctionTime[];
  stages: StageTime[];
}

/** A stage of the service's request pipeline: code of these packages, or under this path. */
interface StageDefinition {
  stage: string;
  packages?: string[];
  /** A part of the script's path, e.g. a file of a package. */
  pathPart?: string;
  /** The service's own code (dist/src). */
  app?: boolean;
}

export const PIPELINE_STAGES: readonly StageDefinition[] = [
  { stage: 'app code (dist/src)', app: true },
  { stage: 'request logging (RequestLogMiddleware, AppLogger)', pathPart: '/dist/src/logging/' },
  { stage: 'log lines (pino, sonic-boom)', packages: ['pino', 'sonic-boom'] },
  {
    stage: 'authentication (passport, @nestjs/passport, passport-http-bearer)',
    packages: ['passport', '@nestjs/passport', 'passport-http-bearer', 'passport-strategy'],
  },
  { stage: 'helmet', packages: ['helmet'] },
  { stage: 'express / router', packages: ['express', 'router'] },
  {
    stage: '@nestjs/core router-execution-context (guards, interceptors, pipes, handler)',
    pathPart: '/node_modules/@nestjs/core/router/router-execution-context.js',
  },
  { stage: 'typeorm', packages: ['typeorm'] },
  { stage: 'validation (class-validator, class-transformer)', packages: ['class-validator', 'class-transformer'] },
  { stage: 'rxjs', packages: ['rxjs'] },
  // better-sqlite3's statements run in native code, which the profile counts in their JS caller (TypeORM).
  { stage: 'database driver JS (mysql2, better-sqlite3)', packages: ['mysql2', 'better-sqlite3'] },
  { stage: 'metrics (prom-client)', packages: ['prom-client'] },
  { stage: 'rate limiting (@nestjs/throttler)', packages: ['@nestjs/throttler'] },
];

export interface AnalyseOptions {
  /** Restricts the analysis to the samples taken in this window (e.g. the measured load run). */
  window?: TimeWindow;
  topGroups?: number;
  topFunctions?: number;
}

const IDLE = '(idle)';

/** Self time by group and by function, and inclusive time of the pipeline stages, as shares of non-idle time. */
export function analyseCpuProfile(profile: CpuProfile, options: AnalyseOptions = {}): ProfileBreakdown {
  const { topGroups = 15, topFunctions = 20 } = options;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const { times, weights } = sampleTimes(profile);
  const samples = profile.samples ?? [];

  let scope: ProfileBreakdown['scope'] = 'whole profile';
  let scopeNote: string | undefined;
  let [fromUs, toUs] = [profile.startTime, profile.endTime];
  if (options.window !== undefined) {
    const { startUs, endUs } = options.window;
    const inside = startUs >= profile.startTime && endUs <= profile.endTime;
    const sampled = inside && times.some((time) => time >= startUs && time < endUs);
    if (sampled) [scope, fromUs, toUs] = ['measured window', startUs, endUs];
    else scopeNote = 'the measured window is not within the profile (another clock?): the whole profile is analysed';
  }

  const stageMasks = stageMasksOf(profile);
  const selfByNode = new Map<number, number>();
  const stageTimes = PIPELINE_STAGES.map(() => 0);
  let [count, sampledUs, idleUs] = [0, 0, 0];
  for (let index = 0; index < samples.length; index++) {
    if (times[index] < fromUs || times[index] >= toUs) continue;
    const node = nodes.get(samples[index]);
    if (node === undefined) continue;
    const weight = weights[index];
    count++;
    sampledUs += weight;
    if (node.callFrame.functionName === IDLE) {
      idleUs += weight;
      continue;
    }
    selfByNode.set(node.id, (selfByNode.get(node.id) ?? 0) + weight);
    const mask = stageMasks.get(node.id) ?? 0;
    for (let stage = 0; stage < PIPELINE_STAGES.length; stage++) if (mask & (1 << stage)) stageTimes[stage] += weight;
  }
  const busyUs = sampledUs - idleUs;
  const percentOf = (microseconds: number): number => (busyUs > 0 ? (100 * microseconds) / busyUs : 0);

  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, Omit<FunctionTime, 'selfMs' | 'percent'> & { us: number }>();
  for (const [id, microseconds] of selfByNode) {
    const frame = nodes.get(id)!.callFrame;
    const group = groupOf(frame);
    byGroup.set(group, (byGroup.get(group) ?? 0) + microseconds);
    const key = `${frame.functionName}@${frame.url}:${frame.lineNumber}:${frame.columnNumber}`;
    const entry = byFunction.get(key) ?? {
      functionName: frame.functionName === '' ? '(anonymous)' : frame.functionName,
      location: locationOf(frame),
      group,
      us: 0,
    };
    entry.us += microseconds;
    byFunction.set(key, entry);
  }

  return {
    scope,
    ...(scopeNote === undefined ? {} : { scopeNote }),
    fromUs,
    toUs,
    samples: count,
    sampledMs: sampledUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: busyUs / 1000,
    groups: [...byGroup]
      .sort((left, right) => right[1] - left[1])
      .slice(0, topGroups)
      .map(([group, us]) => ({ group, selfMs: us / 1000, percent: percentOf(us) })),
    functions: [...byFunction.values()]
      .sort((left, right) => right.us - left.us)
      .slice(0, topFunctions)
      .map(({ us, ...entry }) => ({ ...entry, selfMs: us / 1000, percent: percentOf(us) })),
    stages: PIPELINE_STAGES.map((definition, index) => ({
      stage: definition.stage,
      inclusiveMs: stageTimes[index] / 1000,
      percent: percentOf(stageTimes[index]),
    })).sort((left, right) => right.inclusiveMs - left.inclusiveMs),
  };
}

/** When each sample was taken, and the time it stands for (until the next sample, or the profile's end). */
export function sampleTimes(profile: CpuProfile): { times: number[]; weights: number[] } {
  const deltas = profile.timeDeltas ?? [];
  const count = profile.samples?.length ?? 0;
  const times: number[] = [];
  let time = profile.startTime;
  for (let index = 0; index < count; index++) {
    time += deltas[index] ?? 0;
    times.push(time);
  }
  const weights = times.map((at, index) =>
    Math.max(0, (index + 1 < times.length ? times[index + 1] : profile.endTime) - at),
  );
  return { times, weights };
}

/** For every node, a bit per pipeline stage found anywhere on its stack (the node and its ancestors). */
function stageMasksOf(profile: CpuProfile): Map<number, number> {
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const masks = new Map<number, number>();
  for (const node of profile.nodes) {
    // Walk up to the first ancestor already known, then fill the masks in on the way down.
    const path: number[] = [];
    let id: number | undefined = node.id;
    while (id !== undefined && !masks.has(id)) {
      path.push(id);
      id = parents.get(id);
    }
    let mask = id === undefined ? 0 : masks.get(id)!;
    for (let index = path.length - 1; index >= 0; index--) {
      mask |= ownStageMask(nodes.get(path[index])!.callFrame);
      masks.set(path[index], mask);
    }
  }
  return masks;
}

function ownStageMask(frame: CallFrame): number {
  const path = scriptPath(frame.url);
  if (path === '') return 0;
  const packageName = packageOf(path);
  let mask = 0;
  PIPELINE_STAGES.forEach((definition, index) => {
    const matches =
      (definition.app === true && packageName === undefined && appDirectoryOf(path) !== undefined) ||
      (packageName !== undefined && definition.packages?.includes(packageName) === true) ||
      (definition.pathPart !== undefined && path.includes(definition.pathPart));
    if (matches) mask |= 1 << index;
  });
  return mask;
}

/** The group a function's self time counts under. */
export function groupOf(frame: CallFrame): string {
  const { functionName, url } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === IDLE) return IDLE;
  if (url === '') return 'native/program';
  const path = scriptPath(url);
  const packageName = packageOf(path);
  if (packageName !== undefined) return packageName;
  if (path.startsWith('node:') || path.startsWith('internal/')) return 'node: internals';
  const app = appDirectoryOf(path);
  return app === undefined ? `other: ${path}` : `app: ${app}`;
}

function locationOf(frame: CallFrame): string {
  if (frame.url === '') return '(native)';
  const path = scriptPath(frame.url);
  const modules = path.lastIndexOf('/node_modules/');
  const app = path.indexOf('/dist/src/');
  const short = modules >= 0 ? path.slice(modules + 14) : app >= 0 ? path.slice(app + 1) : path;
  return `${short}:${frame.lineNumber + 1}`;
}

/** A file path for file: URLs; anything else (node:internal/…) as it is. */
function scriptPath(url: string): string {
  if (!url.startsWith('file:')) return url;
  try {
    return fileURLToPath(url);
  } catch {
    return url;
  }
}

/** `express`, `@nestjs/core`: the package of the innermost node_modules directory in the path. */
function packageOf(path: string): string | undefined {
  const index = path.lastIndexOf('/node_modules/');
  if (index < 0) return undefined;
  const [first, second] = path.slice(index + 14).split('/');
  return first.startsWith('@') && second !== undefined ? `${first}/${second}` : first;
}

/** `dist/src/posts` for the service's own compiled code, `dist/src` for the files at its top. */
function appDirectoryOf(path: string): string | undefined {
  const index = path.lastIndexOf('/dist/src/');
  if (index < 0) return undefined;
  const rest = path.slice(index + 10).split('/');
  return rest.length > 1 ? `dist/src/${rest[0]}` : 'dist/src';
}

/** The breakdown as lines of text, for the benchmark's output. */
export function formatBreakdown(breakdown: ProfileBreakdown, responses?: number): string[] {
  const ms = (value: number): string => `${formatNumber(value)} ms`.padStart(9);
  const percent = (value: number): string => `${formatNumber(value, 1)}%`.padStart(6);
  const seconds = (breakdown.toUs - breakdown.fromUs) / 1e6;
  const idleShare = breakdown.sampledMs > 0 ? (100 * breakdown.idleMs) / breakdown.sampledMs : 0;
  const lines = [
    `${breakdown.scope} (${formatNumber(seconds, 1)} s, ${formatNumber(breakdown.samples)} samples): ` +
      `${formatNumber(breakdown.busyMs)} ms not idle, ${formatNumber(idleShare)}% idle` +
      (responses === undefined || responses === 0
        ? ''
        : `; ${formatNumber(breakdown.busyMs / responses, 2)} ms not idle per response`),
  ];
  if (breakdown.scopeNote !== undefined) lines.push(`(${breakdown.scopeNote})`);
  const width = (values: string[]): number => Math.max(...values.map((value) => value.length));
  const groupWidth = width(breakdown.groups.map((entry) => entry.group));
  lines.push(`self time by group, top ${breakdown.groups.length} (% of non-idle time):`);
  for (const entry of breakdown.groups) {
    lines.push(`  ${percent(entry.percent)} ${ms(entry.selfMs)}  ${entry.group.padEnd(groupWidth)}`.trimEnd());
  }
  lines.push(`functions by self time, top ${breakdown.functions.length}:`);
  const nameWidth = Math.min(40, width(breakdown.functions.map((entry) => entry.functionName)));
  for (const entry of breakdown.functions) {
    lines.push(
      `  ${percent(entry.percent)} ${ms(entry.selfMs)}  ${entry.functionName.padEnd(nameWidth)}  ${entry.location}`,
    );
  }
  lines.push('pipeline stages, inclusive time (% of non-idle time; synchronous stacks, so stages nest and overlap):');
  const stageWidth = width(breakdown.stages.map((entry) => entry.stage));
  for (const entry of breakdown.stages) {
    lines.push(`  ${percent(entry.percent)} ${ms(entry.inclusiveMs)}  ${entry.stage.padEnd(stageWidth)}`.trimEnd());
  }
  return lines;
}
