// What a route answers, and the one mapping from failures to HTTP statuses.
import { isSessionKitError } from '@sessionkit/core';
import { isAbortError } from '../runtime/cli-error.js';
import { redactText } from '../runtime/redact.js';
import type { SafeHtml } from './html.js';

/** A route's answer before the server adds the headers every response carries. */
export interface Reply {
  status: number;
  contentType: string;
  body: string | Buffer;
  /** Extra headers (`Cache-Control` defaults to `no-store`). */
  headers?: Record<string, string>;
}

/** A request the viewer refuses with `status` and a message for the reader. */
export class HttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
  }
}

/** An HTML answer (a page or a fragment). */
export function htmlReply(body: SafeHtml, status = 200): Reply {
  return { status, contentType: 'text/html; charset=utf-8', body: body.toString() };
}

/** A JSON answer, indented. */
export function jsonReply(value: unknown, status = 200): Reply {
  return {
    status,
    contentType: 'application/json; charset=utf-8',
    body: `${JSON.stringify(value, null, 2)}\n`,
  };
}

/** How a failure is shown: its status and a one-line message without credentials. */
export interface Failure {
  status: number;
  message: string;
  /** True when the client went away: nothing is written. */
  aborted: boolean;
}

const STATUS_OF_CODE: Record<string, number> = {
  not_found: 404,
  invalid_argument: 400,
  unavailable: 503,
  closed: 503,
  corrupt: 500,
};

/**
 * The status and message for any error a route throws: an `HttpError` as given, a
 * `SessionKitError` by its code (`not_found` 404, `invalid_argument` 400, `unavailable`
 * 503 …), anything else 500. Credentials in any URL of the message are removed.
 */
export function failureOf(e: unknown): Failure {
  if (isAbortError(e)) return { status: 499, message: 'the client went away', aborted: true };
  if (e instanceof HttpError) return { status: e.status, message: e.message, aborted: false };
  const message = redactText(e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ');
  if (isSessionKitError(e)) {
    return { status: STATUS_OF_CODE[e.code] ?? 500, message, aborted: false };
  }
  return { status: 500, message: `internal error: ${message}`, aborted: false };
}
