// What keeps the viewer private: the headers every response carries, the access token of
// a viewer reachable from other machines, and the Host check that keeps a web page
// rebinding its own name to 127.0.0.1 (DNS rebinding) from reading a loopback viewer.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/** True for a host name or address that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
}

/** A host as it appears in a URL (`[::1]` for IPv6 addresses). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * The `Host` headers a loopback viewer answers: its own address and `localhost` on its
 * port. Any other name means the request came through a name that merely resolves to
 * this machine (DNS rebinding), and is refused.
 */
export function allowedHostHeaders(host: string, port: number): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '[::1]', urlHost(host).toLowerCase()]);
  return new Set([...names].map((n) => `${n}:${port}`));
}

/** A fresh access token: 24 random bytes, base64url (32 characters). */
export function createAccessToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * True when `given` is the token, compared in constant time (both sides are hashed first,
 * so neither the content nor the length of the token leaks through timing).
 */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** The cookie holding the token after the first visit: per port, so two viewers coexist. */
export function tokenCookieName(port: number): string {
  return `sessionkit_viewer_${port}`;
}

/** The value of cookie `name` in a `Cookie` header, if present. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The token of an `Authorization: Bearer …` header, if present. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

/** The name of the page script's Trusted Types policy (`assets/viewer.js`). */
export const TRUSTED_TYPES_POLICY = 'sessionkit-viewer';

/**
 * The Content-Security-Policy of every response: nothing is allowed unless listed, only
 * the process's own script and style (no inline script, no `eval`), images from the
 * process (and from the web only with `remoteImages`), no framing, forms and requests to
 * the process only, and HTML from strings only through the page script's policy.
 */
export function contentSecurityPolicy(remoteImages: boolean): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self'${remoteImages ? ' https: http:' : ''}`,
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    // Markup may enter a page only through the page script's one Trusted Types policy.
    "require-trusted-types-for 'script'",
    `trusted-types ${TRUSTED_TYPES_POLICY}`,
  ].join('; ');
}

/** Headers on every response besides the CSP. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  'X-Robots-Tag': 'noindex, nofollow',
};
