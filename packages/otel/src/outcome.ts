// What a failed call is recorded as. A store's error message names session ids and can
// quote the caller's values (a JSON path through a message, an over-long title), so the
// message and the stack never reach a span: only the code, which is a fixed word.
import { isSessionKitError } from '@sessionkit/core';

/** A failure as the instrumentation records it. */
export interface FailureOutcome {
  /** `error.type`: the sessionkit code, `aborted`, an error class name, or `_OTHER`. */
  type: string;
  /** The error's `retryable` flag; `false` for anything but a sessionkit error that says so. */
  retryable: boolean;
  /** `exception.type` of the exception event: `SessionKitError`, the class name, or `_OTHER`. */
  exceptionType: string;
}

// A code or a class name is a short identifier; anything else could be text.
const CODE = /^[a-z][a-z_]{0,31}$/;
const CLASS_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/**
 * Classifies a thrown value without reading its message: a sessionkit error by its code
 * (also a code this copy of core does not know yet, from a newer adapter), an
 * `AbortError` (a signal that fired inside a driver) as `aborted`, any other error by its
 * class name when that is an identifier, else `_OTHER` (OpenTelemetry's fallback value).
 */
export function classifyFailure(error: unknown): FailureOutcome {
  if (isSessionKitError(error)) {
    return { type: error.code, retryable: error.retryable === true, exceptionType: error.name };
  }
  const e = error as { name?: unknown; code?: unknown; retryable?: unknown } | null;
  const name = typeof e === 'object' && e !== null && typeof e.name === 'string' ? e.name : '';
  if (name === 'SessionKitError' && typeof e?.code === 'string' && CODE.test(e.code)) {
    return { type: e.code, retryable: e.retryable === true, exceptionType: name };
  }
  if (name === 'AbortError') return { type: 'aborted', retryable: false, exceptionType: name };
  if (CLASS_NAME.test(name)) return { type: name, retryable: false, exceptionType: name };
  return { type: '_OTHER', retryable: false, exceptionType: '_OTHER' };
}
