import type { Request } from 'express';

/**
 * The path as the client sent it, without the query string (where a misplaced access_token would be).
 * `originalUrl`, because Express strips the mount path from `url` and `path` inside a mounted router
 * (the global prefix); `url` for requests that never went through Express.
 */
export function requestPath(request: Pick<Request, 'originalUrl' | 'url'>): string {
  const url = request.originalUrl ?? request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
