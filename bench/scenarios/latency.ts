import { compareAlternating, contender, measure, printComparison } from '../compare.js';
import { getPostRequests, loadProblems } from '../load.js';
import { formatNumber, print, printLoud } from '../output.js';
import { requireBaseline, type ScenarioContext } from './scenario-context.js';
import { describeBound, verdictFor, type ScenarioResult } from './scenario-result.js';

const LOAD_SHARE = 0.6;
const BOUND = { atMost: 3 };
// Below this share of the fixed rate a server fell behind: its latencies are those of a saturated server.
const SUSTAINED = 0.95;

/**
 * latency: GET /posts/:id at a fixed rate, 60% of the baseline's peak, on both; service p99 ≤ 3 ×
 * baseline p99. The peak is the get scenario's baseline median, or measured here when get did not run.
 */
export async function runLatencyScenario(context: ScenarioContext): Promise<ScenarioResult> {
  const baseline = requireBaseline(context);
  const requests = getPostRequests(context.idRange);
  let peak = context.baselineGetPeak;
  if (peak === undefined) {
    print(`  latency: measuring ${context.baselineName}'s peak first (the get scenario did not run)`);
    const peakRun = contender(context.baselineName, baseline, requests);
    await measure(peakRun, context.settings, context.settings.warmupSeconds, 'warm-up');
    const result = await measure(peakRun, context.settings, context.settings.durationSeconds, 'peak');
    const problem = loadProblems(result);
    if (problem !== undefined)
      throw new Error(`${context.baselineName} failed while its peak was measured: ${problem}`);
    peak = result.requestsPerSecond;
  }
  const rate = Math.max(1, Math.round(peak * LOAD_SHARE));
  print(
    `  latency: GET /posts/:id at ${formatNumber(rate)} req/s (${LOAD_SHARE * 100}% of ${context.baselineName}'s ` +
      `peak ${formatNumber(peak)}); target: service p99 ≤ ${BOUND.atMost} × ${context.baselineName} p99`,
  );
  const comparison = await compareAlternating(
    contender('service', context.service, requests),
    contender(context.baselineName, baseline, requests),
    { ...context.settings, overallRate: rate },
  );
  const service = comparison.a.median.latencyP99Ms;
  const baselineP99 = comparison.b.median.latencyP99Ms;
  const ratio = service / baselineP99;
  const notes = [...comparison.problems];
  const unsustained = [comparison.a, comparison.b].filter((side) => side.median.requestsPerSecond < SUSTAINED * rate);
  for (const side of unsustained) {
    const note = `${side.name} did not sustain the rate: ${formatNumber(side.median.requestsPerSecond)} of ${formatNumber(rate)} req/s`;
    printLoud([note, 'Its latencies are those of a saturated server.']);
    notes.push(note);
  }
  // A service that cannot keep up with the rate has no bounded latency at it, whatever p99 the
  // closed-loop load generator saw.
  const ratioVerdict = verdictFor(ratio, BOUND, comparison.problems);
  const verdict = ratioVerdict === 'PASS' && unsustained.includes(comparison.a) ? 'BELOW' : ratioVerdict;
  printComparison(
    'latency',
    comparison,
    `ratio of p99 service / ${context.baselineName} ${formatNumber(ratio, 2)}, target ${describeBound(BOUND)}` +
      `${unsustained.includes(comparison.a) ? ', but the service fell behind the rate' : ''}: ${verdict}`,
  );
  return {
    scenario: 'latency',
    database: context.database.kind,
    unit: 'p99 ms',
    serviceLabel: 'service',
    baselineLabel: context.baselineName,
    service,
    baseline: baselineP99,
    ratio,
    target: describeBound(BOUND),
    verdict,
    notes,
    details: { rate, baselinePeak: peak, comparison },
  };
}
