// Progress reports and cancellation for the helpers that walk a whole store (export,
// import, enforceMax), so an application or a command line can show how far they are and
// stop them at a safe point.
import { errorsFor } from '../errors.js';

const errors = errorsFor('core');

/** How far a long helper is: items `done` so far in its current `phase`, of `total` when known. */
export interface Progress {
  /** What is being counted, e.g. `"export"`, `"check"`, `"import"`, `"scan"`, `"delete"`. */
  phase: string;
  done: number;
  total?: number;
}

/** Options every long helper takes. */
export interface ProgressOptions {
  /**
   * Called after each item (a session exported, checked, imported, scanned or deleted).
   * Synchronous; an exception it throws stops the helper and propagates.
   */
  onProgress?: ((progress: Progress) => void) | undefined;
  /**
   * Stops the helper at its next safe point (between sessions, never inside one): the
   * helper then rejects with `signal.reason` (an `AbortError` unless the caller gave one).
   * What it had done stays done; see each helper for how to resume.
   */
  signal?: AbortSignal | undefined;
}

/** The keys of `ProgressOptions`, for each helper's unknown-option check. */
export const PROGRESS_OPTION_KEYS = ['onProgress', 'signal'] as const;

/** Throws `invalid_argument` unless `onProgress` is a function and `signal` an `AbortSignal`. */
export function assertProgressOptions(where: string, options: ProgressOptions): void {
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
    throw errors.invalid(`${where}: onProgress must be a function`);
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw errors.invalid(`${where}: signal must be an AbortSignal`);
  }
}

/** Throws the signal's reason when it has been aborted (a safe point). */
export function stopIfAborted(options: ProgressOptions): void {
  options.signal?.throwIfAborted();
}
