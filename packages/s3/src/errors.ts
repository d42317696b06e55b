// Error messages of this package and how S3 client failures become sessionkit errors.
import { isSessionKitError, type SessionKitError } from '@sessionkit/core';
import { errorsFor } from '@sessionkit/core/adapter';

/** The error factory of this package: messages start with `[sessionkit/s3]`. */
export const errors = errorsFor('s3');

/** What the S3 client throws, as far as this package reads it. */
interface S3ErrorShape {
  name?: unknown;
  Code?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: unknown;
  code?: unknown;
}

/** The HTTP status of an S3 client error, or undefined when no response came back. */
export function httpStatusOf(e: unknown): number | undefined {
  const status = (e as S3ErrorShape | null)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The S3 error code (`NoSuchKey`, `PreconditionFailed` …) of a client error. */
export function s3CodeOf(e: unknown): string {
  const shape = e as S3ErrorShape | null;
  const code = shape?.Code ?? shape?.name;
  return typeof code === 'string' ? code : '';
}

/** Network error codes that mean the server could not be reached or dropped the request. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

/**
 * Turns an S3 client failure during `doing` into a sessionkit error: `unavailable`
 * (retryable) when the server could not be reached, throttled or failed with a 5xx;
 * `invalid_argument` for access and bucket errors (configuration); `corrupt` otherwise.
 * Messages carry the S3 code and status, never credentials or object bodies.
 */
export function wrapS3Error(e: unknown, doing: string): SessionKitError {
  if (isSessionKitError(e)) return e;
  const status = httpStatusOf(e);
  const code = s3CodeOf(e);
  const errno = (e as S3ErrorShape | null)?.code;
  if (
    status === undefined ||
    status >= 500 ||
    status === 429 ||
    status === 408 ||
    code === 'SlowDown' ||
    code === 'TimeoutError' ||
    (typeof errno === 'string' && NETWORK_CODES.has(errno))
  ) {
    const what =
      status === undefined
        ? `cannot reach the S3 server (${code || String(errno ?? 'no response')})`
        : `S3 answered ${status} ${code}`;
    return errors.unavailable(`${doing}: ${what}`, e);
  }
  if (status === 403 || status === 401 || code === 'NoSuchBucket' || status === 400) {
    return errors.invalid(`${doing}: S3 refused the request (${status} ${code})`);
  }
  return errors.make('corrupt', `${doing}: unexpected S3 answer ${status} ${code}`, { cause: e });
}

/** `corrupt` errors that say an object a state names is gone (see `missing`). */
const missingErrors = new WeakSet<object>();

/**
 * The `corrupt` error of an object a state names that is not there. Superseded objects
 * are removed after a fold, so a reader holding an old state may meet one: such a reader
 * re-reads the head and tries again (`isMissing`); only a state read afresh that still
 * names a missing object is really corrupt.
 */
export function missing(id: string, what: string): SessionKitError {
  const e = errors.corrupt(id, `${what} is missing`);
  missingErrors.add(e);
  return e;
}

/** Whether `e` is a `missing` error (an old state met a removed object). */
export function isMissing(e: unknown): boolean {
  return typeof e === 'object' && e !== null && missingErrors.has(e);
}
