// Which handler answers which path. Paths hold session ids and numbers only; anything
// else is a 404.
import { eventsRoute } from './events-page.js';
import { listRoute } from './list-page.js';
import { imageRoute, rawMessageRoute } from './message-routes.js';
import { HttpError, type Reply } from './reply.js';
import type { RequestContext } from './route-context.js';
import { sessionRoute } from './session-page.js';
import { treeRoute } from './tree-page.js';

/** A handler gets the request and the path's captured segments. */
export type Route = (ctx: RequestContext, segments: string[]) => Promise<Reply>;

function assetRoute(ctx: RequestContext, [name = '']: string[]): Promise<Reply> {
  const asset = ctx.viewer.assets.get(name);
  if (!asset) throw new HttpError(404, 'no such file');
  const versioned = ctx.url.searchParams.get('v') === asset.version;
  return Promise.resolve({
    status: 200,
    contentType: asset.contentType,
    body: asset.body,
    headers: {
      'Cache-Control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
      ETag: `"${asset.version}"`,
    },
  });
}

const ROUTES: readonly [RegExp, Route][] = [
  [/^\/$/, listRoute],
  [/^\/s\/([^/]+)$/, sessionRoute],
  [/^\/s\/([^/]+)\/tree$/, treeRoute],
  [/^\/s\/([^/]+)\/events$/, eventsRoute],
  [/^\/s\/([^/]+)\/messages\/([^/]+)$/, rawMessageRoute],
  [/^\/s\/([^/]+)\/messages\/([^/]+)\/images\/([^/]+)$/, imageRoute],
  [/^\/assets\/([a-z]+\.[a-z]+)$/, assetRoute],
  [/^\/(favicon\.ico)$/, (ctx) => assetRoute(ctx, ['favicon.svg'])],
];

/** The route for `pathname` and its captured segments, or a 404. */
export function routeOf(pathname: string): { route: Route; segments: string[] } {
  for (const [pattern, route] of ROUTES) {
    const m = pattern.exec(pathname);
    if (m) return { route, segments: m.slice(1) };
  }
  throw new HttpError(404, `no page at ${pathname}`);
}
