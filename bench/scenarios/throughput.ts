import {
  compareAlternating,
  contender,
  printComparison,
  sideProblems,
  type Comparison,
  type SideResult,
} from '../compare.js';
import { createPostRequests, getPostRequests } from '../load.js';
import { formatNumber, print } from '../output.js';
import { profileScenario } from '../profiling.js';
import { requireBaseline, type ScenarioContext } from './scenario-context.js';
import { describeBound, verdictFor, type ScenarioResult } from './scenario-result.js';

/**
 * get: GET /posts/:id at full speed, service vs baseline, random ids over the seeded rows. With
 * --floor, F (the smallest NestJS application answering the same) runs in the same rounds, and two
 * INFO rows follow the result: F / baseline and service / F.
 */
export async function runGetScenario(context: ScenarioContext): Promise<ScenarioResult[]> {
  const bound = { atLeast: context.database.kind === 'mysql' ? 0.65 : 0.5 };
  const { min, max } = context.idRange;
  print(
    `  get: GET /posts/:id, random ids ${min}..${max}; target: service ≥ ${bound.atLeast} × ${context.baselineName} req/s` +
      (context.floor === undefined ? '' : `; F in the same rounds (service, ${context.baselineName}, F in turn)`),
  );
  const requests = getPostRequests(context.idRange);
  const comparison = await compareAlternating(
    contender('service', context.service, requests),
    contender(context.baselineName, requireBaseline(context), requests),
    context.settings,
    context.floor === undefined ? [] : [contender('F', context.floor, requests)],
  );
  context.baselineGetPeak = comparison.b.median.requestsPerSecond;
  const results = throughputResults('get', context, comparison, bound);
  const profile = await profileScenario(context, 'get', requests);
  if (profile !== undefined) results[0].profile = profile;
  return results;
}

/**
 * create: POST /posts at full speed, service vs baseline (on SQLite for information: no target there).
 * With --floor, F runs in the same rounds and adds the same two INFO rows as get.
 */
export async function runCreateScenario(context: ScenarioContext): Promise<ScenarioResult[]> {
  const bound = context.database.kind === 'mysql' ? { atLeast: 0.6 } : null;
  print(
    `  create: POST /posts; target: ${
      bound === null ? 'none on SQLite (measured for information)' : `service ≥ ${bound.atLeast} × B0 req/s`
    }` + (context.floor === undefined ? '' : `; F in the same rounds (service, ${context.baselineName}, F in turn)`),
  );
  const comparison = await compareAlternating(
    contender('service', context.service, createPostRequests()),
    contender(context.baselineName, requireBaseline(context), createPostRequests()),
    context.settings,
    context.floor === undefined ? [] : [contender('F', context.floor, createPostRequests())],
  );
  const results = throughputResults('create', context, comparison, bound);
  const profile = await profileScenario(context, 'create', createPostRequests());
  if (profile !== undefined) results[0].profile = profile;
  return results;
}

/** The scenario's row, then with F (--floor) its two INFO rows: F / baseline and service / F. */
function throughputResults(
  scenario: 'get' | 'create',
  context: ScenarioContext,
  comparison: Comparison,
  bound: { atLeast: number } | null,
): ScenarioResult[] {
  const floor = comparison.more?.[0];
  const results = [throughputResult(scenario, context, comparison, bound, floor)];
  if (floor !== undefined) {
    results.push(
      floorRow(scenario, context, floor, comparison.b, 'what the framework alone keeps of the baseline'),
      floorRow(scenario, context, comparison.a, floor, "what the service's pipeline keeps of the framework"),
    );
  }
  return results;
}

function throughputResult(
  scenario: 'get' | 'create',
  context: ScenarioContext,
  comparison: Comparison,
  bound: { atLeast: number } | null,
  floor?: SideResult,
): ScenarioResult {
  const service = comparison.a.median.requestsPerSecond;
  const baseline = comparison.b.median.requestsPerSecond;
  const ratio = service / baseline;
  // F's failures make its own rows INVALID, not the service's verdict.
  const problems = [...sideProblems(comparison.a), ...sideProblems(comparison.b)];
  const verdict = verdictFor(ratio, bound, problems);
  const outcome = [
    `ratio service / ${context.baselineName} ${formatNumber(ratio, 2)}, target ${describeBound(bound) ?? 'none'}: ${verdict}`,
  ];
  if (floor !== undefined) {
    const floorRps = floor.median.requestsPerSecond;
    outcome.push(
      `ratio F / ${context.baselineName} ${formatNumber(floorRps / baseline, 2)} (what the framework alone keeps of the baseline): INFO`,
      `ratio service / F ${formatNumber(service / floorRps, 2)} (what the service's pipeline keeps of the framework): INFO`,
    );
  }
  printComparison(scenario, comparison, outcome);
  return {
    scenario,
    database: context.database.kind,
    unit: 'req/s',
    serviceLabel: 'service',
    baselineLabel: context.baselineName,
    service,
    baseline,
    ratio,
    target: describeBound(bound),
    verdict,
    notes: problems,
    details: comparison,
  };
}

/** An INFO row of --floor: one side's median over another's. Its runs are in the scenario row's details. */
function floorRow(
  scenario: 'get' | 'create',
  context: ScenarioContext,
  top: SideResult,
  bottom: SideResult,
  meaning: string,
): ScenarioResult {
  const problems = [...sideProblems(top), ...sideProblems(bottom)];
  return {
    scenario,
    database: context.database.kind,
    unit: 'req/s',
    serviceLabel: top.name,
    baselineLabel: bottom.name,
    service: top.median.requestsPerSecond,
    baseline: bottom.median.requestsPerSecond,
    ratio: top.median.requestsPerSecond / bottom.median.requestsPerSecond,
    target: null,
    verdict: problems.length > 0 ? 'INVALID' : 'INFO',
    notes: [meaning, ...problems],
    details: { top: top.median, bottom: bottom.median },
  };
}
