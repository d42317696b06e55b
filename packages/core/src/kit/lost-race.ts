// The one retry loop for optimistic writes that can lose a race to another writer (a
// version check, a conditional write, a serialization failure): one budget on a monotonic
// clock, one backoff, one message.
import type { ErrorFactory } from '../errors.js';
import { throwIfAborted } from '../input/call-options.js';

/** What an attempt returns when another writer got in first and it wrote nothing. */
export const LOST_RACE: unique symbol = Symbol('sessionkit.lostRace');

/** How long a write goes on losing races before it gives up, by default. */
export const LOST_RACE_BUDGET_MS = 20_000;

/** Options of `retryLostRaces`. */
export interface LostRaceOptions {
  errors: ErrorFactory;
  /** The store operation, for messages (`"commit"`). */
  operation: string;
  /** The session written. */
  sessionId: string;
  /** Time spent losing before giving up (monotonic clock). Default `LOST_RACE_BUDGET_MS`. */
  budgetMs?: number | undefined;
  /** Retries after the first attempt at most. Default: as many as the budget allows. */
  maxRetries?: number | undefined;
  /** The error to throw when giving up. Default: `unavailable`, naming the operation. */
  exhausted?: (() => Error) | undefined;
  /** Checked before every retry: an aborted signal gives up with `aborted`. */
  signal?: AbortSignal | undefined;
}

/**
 * Runs `attempt(n)` (n = 0, 1, 2 …) until it returns something other than `LOST_RACE`.
 * An attempt that lost must have written nothing. Between attempts it waits a random
 * ("full jitter") pause whose ceiling doubles from 1 ms to 50 ms, so writers that lost
 * together spread out and a writer that lost often is not left behind. Gives up with
 * `options.exhausted()` (default `unavailable`, retryable) once `maxRetries` retries or
 * `budgetMs` have been spent losing; with `aborted` when the signal fires between attempts.
 * Errors thrown by an attempt end the loop as they are.
 */
export async function retryLostRaces<T>(
  options: LostRaceOptions,
  attempt: (n: number) => Promise<T | typeof LOST_RACE>,
): Promise<T> {
  const budget = options.budgetMs ?? LOST_RACE_BUDGET_MS;
  const giveUpAt = performance.now() + budget;
  for (let n = 0; ; n++) {
    const outcome = await attempt(n);
    if (outcome !== LOST_RACE) return outcome;
    const outOfRetries = options.maxRetries !== undefined && n >= options.maxRetries;
    if (outOfRetries || performance.now() >= giveUpAt) {
      throw (
        options.exhausted?.() ??
        options.errors.unavailable(
          `${options.operation} of session "${options.sessionId}" kept losing races with other writers for ${Math.round(budget / 1000)} s`,
        )
      );
    }
    throwIfAborted(options.errors, options.signal, options.operation, options.sessionId);
    await pause(Math.random() * backoffCeilingMs(n));
  }
}

/** The ceiling of the pause after the `n`-th lost attempt: 1, 2, 4 … ms, at most 50. */
export function backoffCeilingMs(n: number): number {
  return Math.min(50, 2 ** Math.min(n, 6));
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
