// The session counters' one range rule, and the arithmetic that must stay inside it.
import type { ErrorFactory } from './errors.js';

/** The session fields that count: tokens, turns and money. */
export type CounterField = 'tokenCount' | 'costUsd' | 'turnCount';

/**
 * The range every stored counter keeps (DESIGN's value limits): `tokenCount` and
 * `turnCount` are safe integers ≥ 0, `costUsd` is a finite number ≥ 0. Increments and
 * merges whose result falls outside are rejected, never clamped. Pure; never throws.
 */
export function isCounterValue(field: CounterField, value: unknown): value is number {
  if (typeof value !== 'number' || value < 0) return false;
  return field === 'costUsd' ? Number.isFinite(value) : Number.isSafeInteger(value);
}

/**
 * `current + by` for an integer counter (`tokenCount`, `turnCount`). Throws
 * `invalid_argument` when the result is negative or not a safe integer: a counter never
 * goes below 0 or loses precision, and such an increment is rejected, not clamped.
 */
export function incrementedCount(
  errors: ErrorFactory,
  id: string,
  field: 'tokenCount' | 'turnCount',
  current: number,
  by: number,
): number {
  const result = current + by + 0;
  if (!isCounterValue(field, result)) {
    throw errors.invalid(
      `commit: increment.${field} ${by} would take ${field} from ${current} to ${result}, outside 0…${Number.MAX_SAFE_INTEGER}`,
      id,
    );
  }
  return result;
}

/**
 * `current + by` for `costUsd`. Throws `invalid_argument` when the result is negative or
 * not finite (rejected, not clamped).
 */
export function incrementedCost(
  errors: ErrorFactory,
  id: string,
  current: number,
  by: number,
): number {
  const result = current + by + 0;
  if (!isCounterValue('costUsd', result)) {
    throw errors.invalid(
      `commit: increment.costUsd ${by} would take costUsd from ${current} to ${result}, outside finite non-negative numbers`,
      id,
    );
  }
  return result;
}
