import { describeRun } from '../compare.js';
import { loadProblems, runLoad, soakMixRequests } from '../load.js';
import { formatMebibytes, formatNumber, formatSeconds, print, printLoud } from '../output.js';
import { residentSetSize } from '../processes.js';
import type { ScenarioContext } from './scenario-context.js';
import type { ScenarioResult } from './scenario-result.js';

const RSS_GROWTH_LIMIT = 1.2;
const SAMPLE_INTERVAL_MS = 60_000;

interface RssSample {
  atSeconds: number;
  bytes: number;
  responses: number;
  failures: number;
}

/**
 * soak: the service alone under a GET/POST mix for the whole --soak time. PASS when its RSS at the
 * end is at most 1.2 × its RSS after the warm-up, and nothing failed.
 */
export async function runSoakScenario(context: ScenarioContext, soakSeconds: number): Promise<ScenarioResult> {
  const warmupSeconds = Math.min(60, Math.max(5, soakSeconds / 10));
  print(
    `  soak: ${formatSeconds(soakSeconds)} of 80% GET /posts/:id, 10% GET /posts, 10% POST /posts; ` +
      `target: end RSS ≤ ${RSS_GROWTH_LIMIT} × warm-up RSS, 0 errors`,
  );
  const requests = soakMixRequests(context.idRange);
  const base = {
    baseUrl: context.service.baseUrl,
    apiKey: context.settings.apiKey,
    connections: context.settings.connections,
    requests,
  };
  const warmup = await runLoad({ ...base, durationSeconds: warmupSeconds });
  print(`    warm-up   service      ${describeRun(warmup)}`);
  const pid = context.service.pid;
  const warmupRss = residentSetSize(pid);
  print(`    RSS after warm-up: ${formatMebibytes(warmupRss)}`);

  const samples: RssSample[] = [{ atSeconds: 0, bytes: warmupRss, responses: 0, failures: 0 }];
  let responses = 0;
  let failures = 0;
  const started = Date.now();
  const sampler = setInterval(() => {
    let bytes: number;
    try {
      bytes = residentSetSize(pid);
    } catch (error) {
      printLoud([`cannot read the service's RSS: ${(error as Error).message}`]);
      return;
    }
    const sample = { atSeconds: Math.round((Date.now() - started) / 1000), bytes, responses, failures };
    samples.push(sample);
    print(
      `    ${formatSeconds(sample.atSeconds).padStart(8)}  RSS ${formatMebibytes(sample.bytes)}  ` +
        `${formatNumber(responses)} responses, ${failures} non-2xx`,
    );
  }, SAMPLE_INTERVAL_MS);
  const result = await runLoad({
    ...base,
    durationSeconds: soakSeconds,
    onResponse: (status) => {
      responses++;
      if (status < 200 || status > 299) failures++;
    },
  }).finally(() => clearInterval(sampler));
  const endRss = residentSetSize(pid);
  samples.push({ atSeconds: Math.round((Date.now() - started) / 1000), bytes: endRss, responses, failures });
  print(`    soak      service      ${describeRun(result)}`);
  print(`    RSS at the end: ${formatMebibytes(endRss)}`);

  const problem = loadProblems(result);
  if (problem !== undefined) printLoud([`service during the soak: ${problem}`]);
  const ratio = endRss / warmupRss;
  const verdict = ratio <= RSS_GROWTH_LIMIT && problem === undefined ? 'PASS' : 'BELOW';
  print(
    `  => soak: RSS ${formatMebibytes(warmupRss)} -> ${formatMebibytes(endRss)} (× ${formatNumber(ratio, 2)}), ` +
      `${result.non2xx + result.errors} failures: ${verdict}`,
  );
  return {
    scenario: 'soak',
    database: context.database.kind,
    unit: 'RSS MiB',
    serviceLabel: 'end',
    baselineLabel: 'after warm-up',
    service: endRss / 1024 / 1024,
    baseline: warmupRss / 1024 / 1024,
    ratio,
    target: `≤ ${RSS_GROWTH_LIMIT}, 0 errors`,
    verdict,
    notes: problem === undefined ? [] : [problem],
    details: { soakSeconds, warmupSeconds, warmup, result, samples },
  };
}
