import autocannon from 'autocannon';

/** One load run against one server, as the benchmark reports it. */
export interface LoadResult {
  /** Mean of the per-second request counts. */
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  /** Responses received (any status). */
  responses: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  /** Responses per status code. */
  statusCodes: Record<string, number>;
  durationSeconds: number;
  /** CPU time (user + system) of the server's process per response, when the caller measured it. */
  serverCpuMsPerRequest?: number;
}

export interface LoadSpec {
  baseUrl: string;
  apiKey: string;
  connections: number;
  durationSeconds: number;
  requests: autocannon.Request[];
  /** Requests per second over all connections; unlimited when absent. */
  overallRate?: number;
  /** Called on every response, e.g. to count them while a long run is going. */
  onResponse?: (statusCode: number) => void;
}

let current: autocannon.Instance | undefined;

/** Drives one server with autocannon, in this process, until the duration is over. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.baseUrl,
        connections: spec.connections,
        duration: spec.durationSeconds,
        headers: { authorization: `Bearer ${spec.apiKey}` },
        requests: spec.requests,
        overallRate: spec.overallRate,
        // autocannon 8 corrects for coordinated omission with an expected interval of ceil(1 / rate)
        // milliseconds, i.e. 1 ms at any rate, which floods the histogram with invented samples; the
        // latencies below are the measured ones, and the achieved rate is reported beside them.
        ignoreCoordinatedOmission: spec.overallRate !== undefined,
        timeout: 10,
      },
      (error: unknown, result: autocannon.Result) => {
        current = undefined;
        if (error) reject(error instanceof Error ? error : new Error(`autocannon failed: ${JSON.stringify(error)}`));
        else resolve(toLoadResult(result));
      },
    );
    current = instance;
    if (spec.onResponse) {
      const onResponse = spec.onResponse;
      instance.on('response', (_client, statusCode) => onResponse(statusCode));
    }
  });
}

/** Ends the run in progress early (Ctrl-C); its promise still settles. */
export function stopLoad(): void {
  current?.stop();
}

function toLoadResult(result: autocannon.Result): LoadResult {
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
    responses: Object.values(statusCodes).reduce((sum, count) => sum + count, 0),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    durationSeconds: result.duration,
  };
}

/** Problems that make a measured run worthless: anything but 2xx, and any connection error. */
export function loadProblems(result: LoadResult): string | undefined {
  if (result.non2xx === 0 && result.errors === 0) return undefined;
  const codes = Object.entries(result.statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, count]) => `${count} × ${code}`);
  return [
    result.non2xx > 0 ? `${result.non2xx} non-2xx responses (${codes.join(', ')})` : undefined,
    result.errors > 0 ? `${result.errors} errors (${result.timeouts} timeouts)` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(', ');
}

// Request shapes. The id of a GET is drawn at random for every request from the seeded rows.

export interface IdRange {
  min: number;
  max: number;
}

function randomId(range: IdRange): number {
  return range.min + Math.floor(Math.random() * (range.max - range.min + 1));
}

export function getPostRequests(range: IdRange): autocannon.Request[] {
  return [{ method: 'GET', setupRequest: (request) => ({ ...request, path: `/posts/${randomId(range)}` }) }];
}

let createdCount = 0;

function newPostBody(): string {
  createdCount++;
  return JSON.stringify({
    title: `Created by the benchmark ${createdCount}`,
    content: `Body of benchmark post ${createdCount}: a short paragraph, valid by the API's rules.`,
    author: `bench-author-${createdCount % 50}`,
  });
}

const JSON_HEADERS = { 'content-type': 'application/json' };

export function createPostRequests(): autocannon.Request[] {
  return [
    {
      method: 'POST',
      path: '/posts',
      headers: JSON_HEADERS,
      setupRequest: (request) => ({ ...request, body: newPostBody() }),
    },
  ];
}

export function listPageRequests(path: string): autocannon.Request[] {
  return [{ method: 'GET', path }];
}

/**
 * The soak's mix: 80% GET /posts/:id, 10% GET /posts (first page), 10% POST /posts. `onCreated`
 * receives the id of every post the service acknowledged with 201.
 */
export function soakMixRequests(range: IdRange, onCreated?: (id: number) => void): autocannon.Request[] {
  return [
    {
      method: 'GET',
      onResponse: onCreated
        ? (status, body) => {
            if (status === 201) onCreated((JSON.parse(body) as { id: number }).id);
          }
        : undefined,
      setupRequest: (request) => {
        const draw = Math.random();
        if (draw < 0.8) return { ...request, method: 'GET', path: `/posts/${randomId(range)}` };
        if (draw < 0.9) return { ...request, method: 'GET', path: '/posts?limit=20' };
        return {
          ...request,
          method: 'POST',
          path: '/posts',
          headers: { ...request.headers, ...JSON_HEADERS },
          body: newPostBody(),
        };
      },
    },
  ];
}
