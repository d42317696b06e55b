// The trailing `{ signal }` of a store call: validated once; an aborted signal stops the
// call before any I/O and between the steps of a long one.
import type { ErrorFactory } from '../errors.js';
import { readInput } from './fields.js';

/**
 * The `AbortSignal` of a call's trailing options (`undefined` when none). Throws
 * `invalid_argument` for a non-object, an unknown key, or a `signal` that is not an
 * `AbortSignal`.
 */
export function normalizeCallOptions(
  errors: ErrorFactory,
  call: unknown,
  what: string,
): AbortSignal | undefined {
  if (call === undefined) return undefined;
  const c = readInput(errors, call, ['signal'], `${what}: call options`);
  const signal = c.signal;
  if (signal === undefined) return undefined;
  if (!(signal instanceof AbortSignal)) {
    throw errors.invalid(`${what}: signal must be an AbortSignal`);
  }
  return signal;
}

/**
 * Throws `aborted` (naming `operation` and the session) when `signal` has been aborted.
 * Call it before any write's atomic step and between the steps of a long read: once a
 * write's atomic step has begun, finish it instead.
 */
export function throwIfAborted(
  errors: ErrorFactory,
  signal: AbortSignal | undefined,
  operation: string,
  sessionId?: string,
): void {
  if (signal?.aborted) throw errors.aborted(operation, sessionId);
}
