import { compareAlternating, contender, printComparison, type Comparison } from '../compare.js';
import { createPostRequests, getPostRequests } from '../load.js';
import { formatNumber, print } from '../output.js';
import { requireBaseline, type ScenarioContext } from './scenario-context.js';
import { describeBound, verdictFor, type ScenarioResult } from './scenario-result.js';

/** get: GET /posts/:id at full speed, service vs baseline, random ids over the seeded rows. */
export async function runGetScenario(context: ScenarioContext): Promise<ScenarioResult> {
  const bound = { atLeast: context.database.kind === 'mysql' ? 0.65 : 0.5 };
  const { min, max } = context.idRange;
  print(
    `  get: GET /posts/:id, random ids ${min}..${max}; target: service ≥ ${bound.atLeast} × ${context.baselineName} req/s`,
  );
  const comparison = await compareAlternating(
    contender('service', context.service, getPostRequests(context.idRange)),
    contender(context.baselineName, requireBaseline(context), getPostRequests(context.idRange)),
    context.settings,
  );
  context.baselineGetPeak = comparison.b.median.requestsPerSecond;
  return throughputResult('get', context, comparison, bound);
}

/** create: POST /posts at full speed, service vs baseline (on SQLite for information: no target there). */
export async function runCreateScenario(context: ScenarioContext): Promise<ScenarioResult> {
  const bound = context.database.kind === 'mysql' ? { atLeast: 0.6 } : null;
  print(
    `  create: POST /posts; target: ${
      bound === null ? 'none on SQLite (measured for information)' : `service ≥ ${bound.atLeast} × B0 req/s`
    }`,
  );
  const comparison = await compareAlternating(
    contender('service', context.service, createPostRequests()),
    contender(context.baselineName, requireBaseline(context), createPostRequests()),
    context.settings,
  );
  return throughputResult('create', context, comparison, bound);
}

function throughputResult(
  scenario: 'get' | 'create',
  context: ScenarioContext,
  comparison: Comparison,
  bound: { atLeast: number } | null,
): ScenarioResult {
  const service = comparison.a.median.requestsPerSecond;
  const baseline = comparison.b.median.requestsPerSecond;
  const ratio = service / baseline;
  const verdict = verdictFor(ratio, bound, comparison.problems);
  printComparison(
    scenario,
    comparison,
    `ratio service / ${context.baselineName} ${formatNumber(ratio, 2)}, target ${describeBound(bound) ?? 'none'}: ${verdict}`,
  );
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
    notes: comparison.problems,
    details: comparison,
  };
}
