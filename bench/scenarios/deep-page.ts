import { CursorCodec } from '../../src/common/pagination/cursor-codec.js';
import { compareAlternating, contender, printComparison } from '../compare.js';
import { queryRows, withConnection } from '../databases.js';
import { listPageRequests } from '../load.js';
import { formatNumber, print } from '../output.js';
import type { ScenarioContext } from './scenario-context.js';
import { describeBound, verdictFor, type ScenarioResult } from './scenario-result.js';

export const DEEP_PAGE_TABLE_ROWS = 1_000_000;
const DEPTH = 500_000;
const PAGE_SIZE = 20;
const BOUND = { atLeast: 0.9 };

/**
 * deep-page: the service alone, GET /posts?limit=20 at depth 500,000 of a 1,000,000-row table vs
 * the first page. Keyset pagination should make them cost the same.
 */
export async function runDeepPageScenario(context: ScenarioContext): Promise<ScenarioResult> {
  const firstPath = `/posts?limit=${PAGE_SIZE}`;
  const deepPath = await deepPagePath(context);
  print(
    `  deep-page: ${deepPath} (after row ${formatNumber(DEPTH)}) vs ${firstPath}; target: deep ≥ ${BOUND.atLeast} × first`,
  );
  await checkPage(context, firstPath);
  await checkPage(context, deepPath);

  const comparison = await compareAlternating(
    contender('deep page', context.service, listPageRequests(deepPath)),
    contender('first page', context.service, listPageRequests(firstPath)),
    context.settings,
  );
  const deep = comparison.a.median.requestsPerSecond;
  const first = comparison.b.median.requestsPerSecond;
  const ratio = deep / first;
  const verdict = verdictFor(ratio, BOUND, comparison.problems);
  printComparison(
    'deep-page',
    comparison,
    `ratio deep / first ${formatNumber(ratio, 2)}, target ${describeBound(BOUND)}: ${verdict}`,
  );
  return {
    scenario: 'deep-page',
    database: context.database.kind,
    unit: 'req/s',
    serviceLabel: 'deep page',
    baselineLabel: 'first page',
    service: deep,
    baseline: first,
    ratio,
    target: describeBound(BOUND),
    verdict,
    notes: comparison.problems,
    details: { deepPath, firstPath, comparison },
  };
}

/**
 * The URL the service's own Link header would give after row 500,000 (newest first): a cursor signed
 * with the service's CURSOR_SECRET by its own codec, for the scope of an unfiltered descending listing.
 */
async function deepPagePath(context: ScenarioContext): Promise<string> {
  const [row] = await withConnection(context.database, (connection) =>
    queryRows<{ id: number }>(connection, 'SELECT id FROM posts ORDER BY id DESC LIMIT 1 OFFSET ?', [DEPTH - 1]),
  );
  if (row === undefined) throw new Error(`the posts table has fewer than ${DEPTH} rows`);
  // Must match pageScope() in src/posts/posts.service.ts: ['posts', order, author ?? null].
  const scope = JSON.stringify(['posts', 'desc', null]);
  const cursor = new CursorCodec(context.cursorSecret).encode({ after: Number(row.id), scope });
  return `/posts?${new URLSearchParams({ limit: String(PAGE_SIZE), order: 'desc', cursor }).toString()}`;
}

/** The page answers 200 with a full page and a next link, so the service accepted the cursor. */
async function checkPage(context: ScenarioContext, path: string): Promise<void> {
  const response = await fetch(`${context.service.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${context.settings.apiKey}` },
    signal: AbortSignal.timeout(10_000),
  });
  const body = await response.text();
  const posts = response.ok ? (JSON.parse(body) as unknown[]) : [];
  if (response.status !== 200 || posts.length !== PAGE_SIZE || !response.headers.has('link')) {
    throw new Error(`pre-flight check failed: GET ${path} answered ${response.status}: ${body.slice(0, 300)}`);
  }
}
