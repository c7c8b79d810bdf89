export interface HttpResult<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, the raw text otherwise ('' for no body). */
  body: T;
  text: string;
}

export type RequestBody = object | string | Uint8Array | undefined;

/** A thin fetch wrapper: objects are sent as application/json unless a content-type is given. */
export async function send<T = unknown>(
  method: string,
  url: string,
  body?: RequestBody,
  headers: Record<string, string> = {},
): Promise<HttpResult<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    const isRaw = typeof body === 'string' || body instanceof Uint8Array;
    init.body = isRaw ? (body as string | Uint8Array<ArrayBuffer>) : JSON.stringify(body);
    const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
    if (!hasType && !isRaw) (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(url, init);
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  const parsed = /json/.test(type) && text !== '' ? (JSON.parse(text) as T) : (text as T);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export type Client = ReturnType<typeof client>;

/**
 * Requests against `baseUrl()`, authenticated as `token()` (Authorization: Bearer) unless the call
 * passes its own authorization header. `as(token)` is the same client as another principal; `as(null)`
 * sends no credentials.
 */
export function client(baseUrl: () => string, token: () => string | null = () => null) {
  const withAuth = (headers: Record<string, string> = {}): Record<string, string> => {
    const current = token();
    const hasOwn = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
    return current === null || hasOwn ? headers : { authorization: `Bearer ${current}`, ...headers };
  };
  return {
    get: <T = unknown>(path: string, headers?: Record<string, string>) =>
      send<T>('GET', baseUrl() + path, undefined, withAuth(headers)),
    post: <T = unknown>(path: string, body?: RequestBody, headers?: Record<string, string>) =>
      send<T>('POST', baseUrl() + path, body, withAuth(headers)),
    put: <T = unknown>(path: string, body?: RequestBody, headers?: Record<string, string>) =>
      send<T>('PUT', baseUrl() + path, body, withAuth(headers)),
    patch: <T = unknown>(path: string, body?: RequestBody, headers?: Record<string, string>) =>
      send<T>('PATCH', baseUrl() + path, body, withAuth(headers)),
    delete: <T = unknown>(path: string, headers?: Record<string, string>) =>
      send<T>('DELETE', baseUrl() + path, undefined, withAuth(headers)),
    send: <T = unknown>(method: string, path: string, body?: RequestBody, headers?: Record<string, string>) =>
      send<T>(method, baseUrl() + path, body, withAuth(headers)),
    /** The headers this client would send, for raw requests. */
    headers: (headers?: Record<string, string>) => withAuth(headers),
    as: (other: string | null) => client(baseUrl, () => other),
  };
}
