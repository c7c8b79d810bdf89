import type { Request } from 'express';

export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The template of the controller route Express matched, global prefix included (`/posts/:id`), or
 * `unmatched`: never the raw URL, whose ids and garbage paths would make a log field or a metric
 * label per value. Controller routes sit on the application's router; Nest answers unknown paths
 * from catch-all routes of its own (`{/*splat}`, or `*path` under a prefix), which are no match.
 */
export function routeTemplateOf(request: Pick<Request, 'route' | 'app'>): string {
  const route = request.route as { path?: unknown; methods?: Record<string, boolean> } | undefined;
  if (route === undefined || typeof route.path !== 'string') return UNMATCHED_ROUTE;
  // Both the request log and the metrics ask for every request; routes are fixed once the app runs.
  let template = templates.get(route);
  if (template === undefined) {
    template = resolve(request, route as { path: string; methods?: Record<string, boolean> });
    templates.set(route, template);
  }
  return template;
}

const templates = new WeakMap<object, string>();

function resolve(request: Pick<Request, 'app'>, route: { path: string; methods?: Record<string, boolean> }): string {
  // Nest registers one route per controller handler and method; a route for every method (module
  // middleware, catch-alls) is no match either.
  if (Object.keys(route.methods ?? {}).length !== 1) return UNMATCHED_ROUTE;
  const stack = (request.app as { router?: { stack?: Array<{ route?: unknown }> } } | undefined)?.router?.stack ?? [];
  return stack.some((layer) => layer.route === route) ? route.path : UNMATCHED_ROUTE;
}
