import type { ScenarioName } from '../options.js';
import type { ProfileReport } from '../profiling.js';

/**
 * BELOW: measured and short of the target. INVALID: failures were measured, the numbers mean nothing.
 * INFO: a ratio given for explanation (--floor), never a target.
 */
export type Verdict = 'PASS' | 'BELOW' | 'INVALID' | 'NO TARGET' | 'INFO';

export interface ScenarioResult {
  scenario: ScenarioName;
  database: 'sqlite' | 'mysql';
  /** Unit of `service` and `baseline`. */
  unit: 'req/s' | 'p99 ms' | 'RSS MiB';
  /** What the two columns are, e.g. `service` / `B0`, or `deep page` / `first page`. */
  serviceLabel: string;
  baselineLabel: string;
  service: number;
  baseline: number;
  /** service / baseline. */
  ratio: number;
  /** e.g. `≥ 0.65`; null: measured for information only. */
  target: string | null;
  verdict: Verdict;
  notes: string[];
  /** Every run, for the JSON file. */
  details: unknown;
  /** --profile: where the CPU time of a profiled run of the service went. */
  profile?: ProfileReport;
}

/** PASS or BELOW against a bound on the ratio; INVALID when the measurement saw failures. */
export function verdictFor(
  ratio: number,
  bound: { atLeast: number } | { atMost: number } | null,
  problems: string[],
): Verdict {
  if (problems.length > 0) return 'INVALID';
  if (bound === null) return 'NO TARGET';
  const met = 'atLeast' in bound ? ratio >= bound.atLeast : ratio <= bound.atMost;
  return met ? 'PASS' : 'BELOW';
}

export function describeBound(bound: { atLeast: number } | { atMost: number } | null): string | null {
  if (bound === null) return null;
  return 'atLeast' in bound ? `≥ ${bound.atLeast}` : `≤ ${bound.atMost}`;
}
