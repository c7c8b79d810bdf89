import type { RunSettings } from '../compare.js';
import type { BenchDatabase } from '../databases.js';
import type { IdRange } from '../load.js';
import type { ChildServer } from '../processes.js';
import type { ProfiledServiceStarter } from '../profiling.js';

/** What a scenario runs against, on one database. */
export interface ScenarioContext {
  database: BenchDatabase;
  service: ChildServer;
  /** B0 (MySQL) or B0s (SQLite); absent for the service-only scenarios. */
  baseline?: ChildServer;
  baselineName: 'B0' | 'B0s';
  /** F, the smallest NestJS application answering GET /posts/:id and POST /posts (--floor), while get or create runs. */
  floor?: ChildServer;
  /** With --profile: starts another service process under node --cpu-prof. */
  startProfiledService?: ProfiledServiceStarter;
  /** Without a fixed rate; scenarios add one where they need it. */
  settings: RunSettings;
  /** Ids of the seeded posts, drawn at random by the GET requests. */
  idRange: IdRange;
  cursorSecret: string;
  /** Median req/s of the baseline's GET /posts/:id once the get scenario measured it. */
  baselineGetPeak?: number;
}

export function requireBaseline(context: ScenarioContext): ChildServer {
  if (context.baseline === undefined) throw new Error(`${context.baselineName} is not running`);
  return context.baseline;
}
