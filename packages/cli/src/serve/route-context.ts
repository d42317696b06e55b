// What a route handler gets: the request's URL, the store as this request sees it, and
// the viewer's long-lived parts.
import type { Store } from '@sessionkit/core';
import type { Assets } from './assets.js';
import type { PageFrame } from './layout.js';
import type { SummaryFinder } from './summaries.js';

/** The parts of a running viewer that outlive requests. */
export interface ViewerParts {
  /** The store itself: for the capability guards (calls go through `RequestContext.store`). */
  store: Store<unknown>;
  summaries: SummaryFinder;
  frame: PageFrame;
  assets: Assets;
  remoteImages: boolean;
}

/** One request, as a route handler sees it. */
export interface RequestContext {
  url: URL;
  /** The store, read-only, timed, refusing new calls once the client has gone. */
  store: Store<unknown>;
  viewer: ViewerParts;
  /** Fires when the client disconnects before the answer is written. */
  signal: AbortSignal;
}
