import { describeRun } from '../compare.js';
import { loadProblems, runLoad, soakMixRequests } from '../load.js';
import { formatMebibytes, formatNumber, formatSeconds, print, printLoud } from '../output.js';
import { residentSetSize } from '../processes.js';
import type { ScenarioContext } from './scenario-context.js';
import type { ScenarioResult } from './scenario-result.js';

const RSS_GROWTH_LIMIT = 1.2;
const SAMPLE_INTERVAL_MS = 60_000;
const SOAK_SHARE_OF_PEAK = 0.7;

/** The posts table's row count, through the API (X-Total-Count). */
async function countPosts(context: ScenarioContext): Promise<number> {
  const response = await fetch(`${context.service.baseUrl}/posts?limit=1&count=true`, {
    headers: { authorization: `Bearer ${context.settings.apiKey}` },
  });
  await response.arrayBuffer();
  const total = response.headers.get('x-total-count');
  if (response.status !== 200 || total === null) throw new Error(`GET /posts?count=true answered ${response.status}`);
  return Number(total);
}

/** The ids among `ids` that GET /posts/:id does not answer with 200. */
async function unreadable(context: ScenarioContext, ids: number[]): Promise<number[]> {
  const missing: number[] = [];
  for (let start = 0; start < ids.length; start += 20) {
    await Promise.all(
      ids.slice(start, start + 20).map(async (id) => {
        const response = await fetch(`${context.service.baseUrl}/posts/${id}`, {
          headers: { authorization: `Bearer ${context.settings.apiKey}` },
        });
        await response.arrayBuffer();
        if (response.status !== 200) missing.push(id);
      }),
    );
  }
  return missing;
}

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
      `at 70% of the peak; target: end RSS ≤ ${RSS_GROWTH_LIMIT} × warm-up RSS, 0 errors, no acknowledged write lost`,
  );
  const base = {
    baseUrl: context.service.baseUrl,
    apiKey: context.settings.apiKey,
    connections: context.settings.connections,
  };
  const warmup = await runLoad({ ...base, requests: soakMixRequests(context.idRange), durationSeconds: warmupSeconds });
  print(`    warm-up   service      ${describeRun(warmup)}`);
  // The warm-up runs flat out: its rate is the service's peak on this mix, and the soak holds 70% of it.
  const rate = Math.max(1, Math.round(SOAK_SHARE_OF_PEAK * warmup.requestsPerSecond));
  print(
    `    soak rate: ${formatNumber(rate)} req/s (${SOAK_SHARE_OF_PEAK * 100}% of the warm-up's ${formatNumber(warmup.requestsPerSecond)})`,
  );
  // Requests the warm-up left in flight land first, so the count is settled.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const postsBefore = await countPosts(context);
  const created: number[] = [];
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
    requests: soakMixRequests(context.idRange, (id) => created.push(id)),
    overallRate: rate,
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

  // Nothing acknowledged is lost: every 201's post reads back, and the table grew by that many, plus
  // at most one POST per connection that was in flight when the load generator stopped listening.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const missing = await unreadable(context, created);
  const postsAfter = await countPosts(context);
  const unacknowledged = postsAfter - postsBefore - created.length;
  const writes =
    `${formatNumber(created.length)} posts acknowledged (201), ${missing.length} of them not readable; ` +
    `table ${formatNumber(postsBefore)} -> ${formatNumber(postsAfter)} rows ` +
    `(${unacknowledged} written while their response was in flight at the stop)`;
  print(`    ${writes}`);
  const lost = missing.length > 0 || unacknowledged < 0 || unacknowledged > context.settings.connections;
  if (lost)
    printLoud([`acknowledged writes are missing: ${writes}`, `unreadable ids: ${missing.slice(0, 20).join(', ')}`]);

  const problem = loadProblems(result);
  if (problem !== undefined) printLoud([`service during the soak: ${problem}`]);
  const ratio = endRss / warmupRss;
  const verdict = ratio <= RSS_GROWTH_LIMIT && problem === undefined && !lost ? 'PASS' : 'BELOW';
  print(
    `  => soak: RSS ${formatMebibytes(warmupRss)} -> ${formatMebibytes(endRss)} (× ${formatNumber(ratio, 2)}), ` +
      `${result.non2xx + result.errors} failures, ${lost ? 'writes LOST' : 'no acknowledged write lost'}: ${verdict}`,
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
    notes: [...(problem === undefined ? [] : [problem]), ...(lost ? [`lost writes: ${writes}`] : [])],
    details: {
      soakSeconds,
      warmupSeconds,
      rate,
      warmup,
      result,
      samples,
      created: created.length,
      missing,
      postsBefore,
      postsAfter,
    },
  };
}
