import { parseArgs } from 'node:util';

export const SCENARIOS = ['get', 'create', 'webhook', 'deep-page', 'latency', 'soak'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306/posts_bench';

export interface DatabaseTarget {
  kind: 'sqlite' | 'mysql';
  /** `sqlite` (a temporary file per run) or the MySQL/MariaDB URL of the throwaway bench database. */
  url: string;
  /** Given on the command line: an unreachable server is then an error, not a skip. */
  explicit: boolean;
}

export interface BenchOptions {
  databases: DatabaseTarget[];
  /** Seconds per measured run. */
  durationSeconds: number;
  /** Seconds of warm-up load per server before a scenario's measured rounds. */
  warmupSeconds: number;
  connections: number;
  rounds: number;
  scenarios: ScenarioName[];
  /** Seconds; null: no soak. */
  soakSeconds: number | null;
  /** get also measures F, the smallest NestJS application answering the same request. */
  floor: boolean;
  /** get and create add a run of the service under node --cpu-prof, analysed after the measured rounds. */
  profile: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --db sqlite|mysql://user@host:3306/posts_bench   database to run on; repeatable
                          (default: sqlite and ${DEFAULT_MYSQL_URL},
                          MySQL skipped with a reason when the server is unreachable)
  --duration 10s          length of each measured run (ms, s, m, h; default 10s)
  --connections N         concurrent connections of the load generator (default 10)
  --rounds N              measured rounds per server and scenario (default 3)
  --scenario a,b          any of get, create, webhook, deep-page, latency, soak (default: all but soak)
  --soak 10m              run the soak scenario for that long (adds it to the scenarios)
  --floor                 get, create: also measure F, the smallest NestJS app answering the
                          same request (the framework floor), in the same rounds
  --profile               get, create: one more run of the service under node --cpu-prof
                          after the measured rounds; prints where its CPU time goes
  --help                  this text
`;

export class UsageError extends Error {}

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      db: { type: 'string', multiple: true },
      duration: { type: 'string', default: '10s' },
      connections: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      scenario: { type: 'string' },
      soak: { type: 'string' },
      floor: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';

  const durationSeconds = parseDuration(values.duration, '--duration');
  const soakSeconds = values.soak === undefined ? null : parseDuration(values.soak, '--soak');
  const scenarios = parseScenarios(values.scenario, soakSeconds !== null);
  return {
    databases: parseDatabases(values.db),
    durationSeconds,
    // Long enough for the JIT and the connection pools, short enough not to double the run time.
    warmupSeconds: Math.max(2, durationSeconds / 2),
    connections: parsePositiveInteger(values.connections, '--connections'),
    rounds: parsePositiveInteger(values.rounds, '--rounds'),
    scenarios,
    soakSeconds,
    floor: values.floor,
    profile: values.profile,
  };
}

const DURATION_UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** `10s`, `500ms`, `10m`, `1h` or a bare number of seconds, in seconds. */
export function parseDuration(value: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  const seconds = match ? Number(match[1]) * DURATION_UNITS[match[2] ?? 's'] : NaN;
  if (!Number.isFinite(seconds) || seconds < 1) {
    throw new UsageError(`${option} must be a duration of at least 1s, such as 10s, 2m or 1h (got "${value}")`);
  }
  return seconds;
}

function parsePositiveInteger(value: string, option: string): number {
  if (!/^[1-9]\d{0,5}$/.test(value)) throw new UsageError(`${option} must be a positive whole number (got "${value}")`);
  return Number(value);
}

function parseScenarios(value: string | undefined, soak: boolean): ScenarioName[] {
  const requested =
    value === undefined
      ? SCENARIOS.filter((name) => name !== 'soak')
      : value
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== '');
  for (const name of requested) {
    if (!(SCENARIOS as readonly string[]).includes(name)) {
      throw new UsageError(`unknown scenario "${name}"; choose from ${SCENARIOS.join(', ')}`);
    }
  }
  const names = new Set(requested as ScenarioName[]);
  if (names.has('soak') && !soak) throw new UsageError('the soak scenario needs its length: --soak 10m');
  if (soak) names.add('soak');
  if (names.size === 0) throw new UsageError('--scenario names no scenario');
  // Always in this order: the service-only scenarios need the larger table seeded after the others.
  return SCENARIOS.filter((name) => names.has(name));
}

function parseDatabases(values: string[] | undefined): DatabaseTarget[] {
  if (values === undefined || values.length === 0) {
    return [
      { kind: 'sqlite', url: 'sqlite', explicit: false },
      { kind: 'mysql', url: DEFAULT_MYSQL_URL, explicit: false },
    ];
  }
  return values.map((value): DatabaseTarget => {
    if (value === 'sqlite') return { kind: 'sqlite', url: 'sqlite', explicit: true };
    if (!/^(mysql|mariadb):\/\//.test(value) || !URL.canParse(value)) {
      throw new UsageError(`--db must be sqlite or a mysql:// URL (got "${value}")`);
    }
    const name = decodeURIComponent(new URL(value).pathname.replace(/^\//, ''));
    // The database is dropped and recreated: refuse anything that does not look like a scratch database.
    if (!/^[A-Za-z0-9_]*bench[A-Za-z0-9_]*$/.test(name)) {
      throw new UsageError(
        `--db ${redactUrl(value)}: the database is dropped and recreated, so its name must contain "bench" (e.g. posts_bench)`,
      );
    }
    return { kind: 'mysql', url: value, explicit: true };
  });
}

/** The URL without its password, for printing. */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}
