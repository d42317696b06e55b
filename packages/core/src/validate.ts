import type { ErrorFactory } from './errors.js';
import { isValidId, MAX_ID_LENGTH } from './ids.js';

/** Largest runtime status: 2 MiB of UTF-8 JSON. One byte more is `too_large`. */
export const MAX_RUNTIME_STATUS_BYTES = 2 * 1024 * 1024;
/** Default page size of `list` and `recent`. */
export const DEFAULT_LIST_LIMIT = 50;
/** Largest page size of `list` and `recent`. */
export const MAX_LIST_LIMIT = 1000;
/** Longest title. */
export const MAX_TITLE_LENGTH = 4096;
/** Longest folder, status, model, provider, mode, event type, router key. */
export const MAX_SHORT_TEXT_LENGTH = 1024;

/** Throws `invalid_argument` unless `id` is a valid session id. Call before any I/O. */
export function assertId(
  errors: ErrorFactory,
  id: unknown,
  what = 'session id',
): asserts id is string {
  if (!isValidId(id)) {
    throw errors.invalid(
      `invalid ${what} ${describeValue(id)}: use 1–${MAX_ID_LENGTH} chars of [A-Za-z0-9._-], not starting with "."`,
    );
  }
}

/** How a bad value is named in an error message: a short quoted string, `null`, or its type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `${JSON.stringify(shown)} (${value.length} chars)`;
  }
  if (value === null) return 'null';
  return `of type ${typeof value}`;
}

/** Largest count of messages (`atTurn`, `branchedAtTurn`, `messageCount`): 2^31 − 1. */
export const MAX_MESSAGE_INDEX = 2 ** 31 - 1;
/** Earliest date a store keeps: 0001-01-01T00:00:00.000Z. */
export const MIN_DATE_MS = -62_135_596_800_000;
/** Latest date a store keeps: 9999-12-31T23:59:59.999Z. */
export const MAX_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Throws `invalid_argument` if `obj` has keys outside `allowed`. */
export function assertKnownKeys(
  errors: ErrorFactory,
  obj: unknown,
  allowed: readonly string[],
  what: string,
): void {
  if (obj === undefined) return;
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw errors.invalid(`${what} must be an object`);
  }
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw errors.invalid(`${what}: unknown option "${key}" (known: ${allowed.join(', ')})`);
    }
  }
}

/**
 * Throws `invalid_argument` unless `value` is a string of at most `max` chars with no NUL
 * and no lone UTF-16 surrogate (the rule of every text field: title, folder, status …).
 */
export function assertText(
  errors: ErrorFactory,
  value: unknown,
  what: string,
  max: number,
): asserts value is string {
  if (typeof value !== 'string')
    throw errors.invalid(`${what} must be a string, got ${describeValue(value)}`);
  if (value.length > max) throw errors.invalid(`${what} is longer than ${max} chars`);
  if (value.includes('\u0000')) throw errors.invalid(`${what} contains a NUL character`);
  if (!(value as string & WellFormedCheck).isWellFormed()) {
    throw errors.invalid(`${what} contains a lone UTF-16 surrogate (not valid Unicode text)`);
  }
}

// Half of a surrogate pair on its own: UTF-8 cannot encode it, so a backend storing text
// as UTF-8 (PostgreSQL, Redis, files) would silently turn it into U+FFFD. Rejected up
// front so every backend returns exactly the text it was given. `isWellFormed` (ES2024,
// in every supported Node) answers at once for text without surrogates.
type WellFormedCheck = { isWellFormed(): boolean };

/** Throws `invalid_argument` unless `value` is a non-negative safe integer. */
export function assertCount(
  errors: ErrorFactory,
  value: unknown,
  what: string,
): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw errors.invalid(`${what} must be a non-negative integer, got ${String(value)}`);
  }
}

/** Throws `invalid_argument` unless `value` is a finite number ≥ 0 (`costUsd`). */
export function assertAmount(
  errors: ErrorFactory,
  value: unknown,
  what: string,
): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw errors.invalid(`${what} must be a finite non-negative number, got ${String(value)}`);
  }
}

/**
 * Throws `invalid_argument` unless `value` is a valid `Date` in the years 1–9999 (every
 * backend can store those exactly, to the millisecond).
 */
export function assertDate(
  errors: ErrorFactory,
  value: unknown,
  what: string,
): asserts value is Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw errors.invalid(`${what} must be a valid Date`);
  }
  const ms = value.getTime();
  if (ms < MIN_DATE_MS || ms > MAX_DATE_MS) {
    throw errors.invalid(`${what} must be in the years 1–9999, got ${value.toISOString()}`);
  }
}

/**
 * Throws `invalid_argument` unless `value` is an integer from 0 to `MAX_MESSAGE_INDEX`
 * (2^31 − 1): a message position or count (`atTurn`, `branchedAtTurn`).
 */
export function assertMessageIndex(
  errors: ErrorFactory,
  value: unknown,
  what: string,
): asserts value is number {
  if (!isIntegerUpTo(value, MAX_MESSAGE_INDEX)) {
    throw errors.invalid(
      `${what} must be an integer from 0 to ${MAX_MESSAGE_INDEX}, got ${String(value)}`,
    );
  }
}

/** True for an integer from 0 to `max`. */
export function isIntegerUpTo(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max;
}

/** Validates a page size: absent or 0 → 50; 1–1000 as given; anything else `invalid_argument`. */
export function normalizeLimit(errors: ErrorFactory, limit: unknown, what = 'limit'): number {
  if (limit === undefined || limit === 0) return DEFAULT_LIST_LIMIT;
  if (
    typeof limit !== 'number' ||
    !Number.isInteger(limit) ||
    limit < 0 ||
    limit > MAX_LIST_LIMIT
  ) {
    throw errors.invalid(
      `${what} must be an integer from 1 to ${MAX_LIST_LIMIT} (0 or absent means ${DEFAULT_LIST_LIMIT}), got ${String(limit)}`,
    );
  }
  return limit;
}

/** Validates an event type: 1–1024 chars, no NUL. */
export function assertEventType(errors: ErrorFactory, type: unknown): asserts type is string {
  assertText(errors, type, 'event type', MAX_SHORT_TEXT_LENGTH);
  if (type === '') throw errors.invalid('event type must not be empty');
}

/** Validates a router key (channel, chat key, thread); `required` forbids `""`. */
export function assertRouterKey(
  errors: ErrorFactory,
  value: unknown,
  what: string,
  required: boolean,
): asserts value is string {
  assertText(errors, value, what, MAX_SHORT_TEXT_LENGTH);
  if (required && value === '') throw errors.invalid(`${what} must not be empty`);
}

/** Validates a branch point against the parent's message count. */
export function assertBranchPoint(
  errors: ErrorFactory,
  id: string,
  atTurn: unknown,
  messageCount: number,
): asserts atTurn is number {
  if (!isIntegerUpTo(atTurn, messageCount)) {
    throw errors.invalid(
      `branch: atTurn must be an integer from 0 to ${messageCount} (the messages of "${id}"), got ${String(atTurn)}`,
      id,
    );
  }
}

/** Validates `enforceMax`'s argument: any integer; `<= 0` means unlimited. */
export function assertMax(errors: ErrorFactory, max: unknown): asserts max is number {
  if (typeof max !== 'number' || !Number.isSafeInteger(max)) {
    throw errors.invalid(`enforceMax: max must be an integer, got ${String(max)}`);
  }
}
