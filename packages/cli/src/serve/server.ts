// `startViewer`: the HTTP server of `sessionkit serve`. Plain `node:http`; every request
// passes the access check, then one route; every answer carries the same security headers
// and a `Server-Timing` header (time in the store and in the viewer).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { redactUrl, type Store } from '@sessionkit/core';
import { type AccessRules, accessRules, checkAccess } from './access.js';
import { loadAssets } from './assets.js';
import { html } from './html.js';
import { errorBody, pageHtml } from './layout.js';
import { failureOf, htmlReply, type Reply } from './reply.js';
import { requestStore, type StoreTiming } from './request-store.js';
import type { ViewerParts } from './route-context.js';
import { routeOf } from './routes.js';
import {
  contentSecurityPolicy,
  createAccessToken,
  isLoopbackHost,
  SECURITY_HEADERS,
  urlHost,
} from './security.js';
import { SummaryFinder } from './summaries.js';

/** The port `sessionkit serve` listens on unless told otherwise. */
export const DEFAULT_VIEWER_PORT = 4477;

/** Options of `startViewer`. */
export interface ViewerOptions {
  /** The store to show (borrowed: `close()` leaves it open). */
  store: Store<unknown>;
  /**
   * How the store is named in the pages. Default: nothing. Pass a URL through core's
   * `redactUrl` first (the CLI does): it is shown as given.
   */
  storeDisplay?: string | undefined;
  /** Address to listen on. Default `127.0.0.1` (this machine only). */
  host?: string | undefined;
  /** Port. Default `DEFAULT_VIEWER_PORT` (4477); `0` picks a free one. */
  port?: number | undefined;
  /**
   * Access token required on every request. Default: none on a loopback host, a fresh
   * random one on any other host (a viewer reachable from other machines always has one).
   */
  token?: string | undefined;
  /** Let pages load images from http(s) URLs found in messages. Default false (links). */
  remoteImages?: boolean | undefined;
  /** Called with a one-line description of each failed request (5xx); default: none. */
  onError?: ((line: string) => void) | undefined;
}

/** A running viewer. */
export interface Viewer {
  /** `http://host:port/`. */
  url: string;
  /** The address to open: `url`, with `?token=…` when the viewer has a token. */
  openUrl: string;
  host: string;
  port: number;
  /** The access token, when one is required. */
  token: string | undefined;
  /** Stops listening and ends open connections (the store stays open). */
  close(): Promise<void>;
}

interface ServerParts {
  viewer: ViewerParts;
  access: AccessRules;
  csp: string;
  onError: ((line: string) => void) | undefined;
}

function serverTiming(timing: StoreTiming, started: number): string {
  const total = performance.now() - started;
  return `store;dur=${timing.ms.toFixed(1)};desc="${timing.calls} calls", total;dur=${total.toFixed(1)}`;
}

function send(res: ServerResponse, reply: Reply, parts: ServerParts, timing: string): void {
  res.writeHead(reply.status, {
    ...SECURITY_HEADERS,
    'Content-Security-Policy': parts.csp,
    'Cache-Control': 'no-store',
    ...reply.headers,
    'Content-Type': reply.contentType,
    'Content-Length': Buffer.byteLength(reply.body),
    'Server-Timing': timing,
  });
  res.end(reply.body);
}

function failureReply(e: unknown, url: URL, parts: ServerParts, method: string): Reply | undefined {
  const failure = failureOf(e);
  if (failure.aborted) return undefined;
  if (failure.status >= 500)
    parts.onError?.(`${method} ${url.pathname} failed: ${failure.message}`);
  if (url.searchParams.has('part')) {
    return htmlReply(html`<p class="notice error">${failure.message}</p>`, failure.status);
  }
  const page = pageHtml(parts.viewer.frame, 'Error', errorBody(failure.status, failure.message));
  return htmlReply(page, failure.status);
}

/** The request's path and query. The Host header is the client's to choose: never used. */
function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://viewer.invalid');
  } catch {
    return undefined;
  }
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  parts: ServerParts,
): Promise<void> {
  const started = performance.now();
  const timing: StoreTiming = { calls: 0, ms: 0 };
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const url = requestUrl(req);
  if (!url) {
    send(
      res,
      htmlReply(html`<p>malformed request target</p>`, 400),
      parts,
      serverTiming(timing, started),
    );
    return;
  }
  let reply = checkAccess(req, url, parts.access, parts.viewer.frame);
  if (!reply) {
    try {
      const { route, segments } = routeOf(url.pathname);
      const store = requestStore(parts.viewer.store, controller.signal, timing);
      reply = await route(
        { url, store, viewer: parts.viewer, signal: controller.signal },
        segments,
      );
    } catch (e) {
      reply = failureReply(e, url, parts, req.method ?? 'GET');
    }
  }
  if (reply && !controller.signal.aborted) send(res, reply, parts, serverTiming(timing, started));
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Starts the read-only web viewer over `options.store` and resolves once it listens.
 * Binds `127.0.0.1` by default; on any other host an access token is required (generated
 * unless given). Only GET is answered (405 otherwise). Rejects with the listen error
 * (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL` …) when it cannot listen.
 */
export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? (isLoopbackHost(host) ? undefined : createAccessToken());
  const assets = await loadAssets();
  const remoteImages = options.remoteImages === true;
  const viewer: ViewerParts = {
    store: options.store,
    summaries: new SummaryFinder(),
    frame: { assets, storeDisplay: redactUrl(options.storeDisplay ?? '') },
    assets,
    remoteImages,
  };
  const parts: ServerParts = {
    viewer,
    access: accessRules(host, 0, token),
    csp: contentSecurityPolicy(remoteImages),
    onError: options.onError,
  };
  const server = createServer((req, res) => {
    answer(req, res, parts).catch((e: unknown) => {
      parts.onError?.(`answering ${req.method} failed: ${failureOf(e).message}`);
      res.destroy();
    });
  });
  const address = await listen(server, host, options.port ?? DEFAULT_VIEWER_PORT);
  parts.access = accessRules(host, address.port, token);
  const url = `http://${urlHost(host)}:${address.port}/`;
  return {
    url,
    openUrl: token === undefined ? url : `${url}?token=${token}`,
    host,
    port: address.port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
