// Who may read: a request is answered only when it is a GET, and either carries the access
// token (a viewer with a token) or names the viewer by its loopback address (a viewer
// without one).
import type { IncomingMessage } from 'node:http';
import { errorBody, type PageFrame, pageHtml } from './layout.js';
import { htmlReply, type Reply } from './reply.js';
import {
  allowedHostHeaders,
  bearerToken,
  cookieValue,
  tokenCookieName,
  tokenMatches,
} from './security.js';

/** How the viewer decides who may read. */
export interface AccessRules {
  /** Required on every request when set (`?token=` once, then a cookie, or a Bearer header). */
  token: string | undefined;
  /** Without a token: the `Host` headers answered (the loopback names and the port). */
  hosts: Set<string>;
  port: number;
}

/** The access rules of a viewer bound to `host:port`. */
export function accessRules(host: string, port: number, token: string | undefined): AccessRules {
  return { token, hosts: allowedHostHeaders(host, port), port };
}

/** A refusal page; it names no store, since the reader may not be allowed to know it. */
function refusal(
  frame: PageFrame,
  status: number,
  message: string,
  headers?: Record<string, string>,
): Reply {
  const anonymous = { ...frame, storeDisplay: '' };
  const reply = htmlReply(pageHtml(anonymous, 'Refused', errorBody(status, message)), status);
  return headers ? { ...reply, headers } : reply;
}

/** `url` without its `token` parameter (where a valid `?token=` visit is sent). */
function withoutToken(url: URL): string {
  const clean = new URL(url.href);
  clean.searchParams.delete('token');
  // One leading slash: "//host/…" in a Location header would leave the viewer.
  return `${clean.pathname.replace(/^\/+/, '/')}${clean.search}`;
}

/**
 * `undefined` when the request may be answered; otherwise the answer: 405 for any method
 * but GET, 403 for a `Host` that is not the viewer's (DNS rebinding), 401 without the
 * token, and for a valid `?token=` a 303 to the same page without it that sets the cookie
 * (so the token leaves the address bar and the history).
 */
export function checkAccess(
  req: IncomingMessage,
  url: URL,
  rules: AccessRules,
  frame: PageFrame,
): Reply | undefined {
  if (req.method !== 'GET') {
    return refusal(
      frame,
      405,
      `the viewer is read-only: ${req.method ?? 'this'} requests are refused`,
      { Allow: 'GET' },
    );
  }
  if (rules.token === undefined) {
    const host = (req.headers.host ?? '').toLowerCase();
    if (rules.hosts.has(host)) return undefined;
    return refusal(
      frame,
      403,
      `this viewer answers only at its loopback address (Host "${host}" refused)`,
    );
  }
  const fromQuery = url.searchParams.get('token');
  if (fromQuery !== null) {
    if (!tokenMatches(fromQuery, rules.token)) return refusal(frame, 401, 'wrong access token');
    const cookie = `${tokenCookieName(rules.port)}=${rules.token}; HttpOnly; SameSite=Strict; Path=/`;
    return {
      status: 303,
      contentType: 'text/plain; charset=utf-8',
      body: '',
      headers: { Location: withoutToken(url), 'Set-Cookie': cookie },
    };
  }
  const given =
    bearerToken(req.headers.authorization) ??
    cookieValue(req.headers.cookie, tokenCookieName(rules.port));
  if (tokenMatches(given, rules.token)) return undefined;
  return refusal(
    frame,
    401,
    'this viewer needs its access token: open the address sessionkit serve printed (…/?token=…)',
  );
}
