// One name for what a store keeps of a session besides its messages, and the one check of
// a header read back from storage.
import type { SessionHeader } from '../adapter-rules.js';
import { type ErrorFactory, errorsFor } from '../errors.js';
import type { HistoryLineage } from '../history-lineage.js';
import { readSessionFields } from '../input/fields.js';

/**
 * A session's stored state without its messages: its header, its merge lineage and how
 * many messages its history holds. Every write plan reads one and returns the next one;
 * every adapter keeps one per session (in whatever encoding its backend needs).
 */
export interface SessionState {
  header: SessionHeader;
  lineage: HistoryLineage;
  messageCount: number;
}

/** Fields every stored header has, beyond those a `save` may leave out. */
const STORED_HEADER_FIELDS = [
  'createdAt',
  'updatedAt',
  'tokenCount',
  'costUsd',
  'turnCount',
  'metadata',
  'title',
  'folder',
  'status',
  'model',
  'provider',
  'revision',
] as const;

/**
 * Why `value` is not a usable stored header of session `id` (decoded: dates as `Date`),
 * or `undefined` when it is: an object whose `id` is `id`, with every stored field present
 * and valid by the rules `create` and `save` apply to input (types, text caps, date range,
 * counter ranges), and a positive integer `revision`. The one rule every adapter applies to
 * what it reads back, so a damaged header is `corrupt` on every backend alike. Pure.
 */
export function storedHeaderProblem(id: string, value: unknown): string | undefined {
  // The reasons' wording is out of any suite's reach: DESIGN asks that an unreadable
  // session be reported, and the adapter's report always names it.
  // Stryker disable StringLiteral,MethodExpression
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'the header is not an object';
  }
  const h = value as Record<string, unknown>;
  if (h.id !== id) return `the header names another session (${JSON.stringify(h.id)})`;
  const missing = STORED_HEADER_FIELDS.find((key) => h[key] === undefined);
  if (missing !== undefined) return `header.${missing} is missing`;
  const rev = h.revision as number;
  if (!Number.isSafeInteger(rev) || rev < 1) return 'header.revision is not a positive integer';
  try {
    readSessionFields(PROBLEM_ERRORS, h, 'header');
  } catch (e) {
    return (e as Error).message.slice(PROBLEM_ERRORS.prefix.length + 1);
  }
  return undefined;
  // Stryker restore StringLiteral,MethodExpression
}

// Its messages are cut to the problem itself (the prefix is removed above).
// Stryker disable next-line StringLiteral: the factory's name is cut from every reason.
const PROBLEM_ERRORS = errorsFor('stored-header');

/**
 * The stored header of `id`, checked by `storedHeaderProblem`. Throws `corrupt` (from
 * `errors`, naming the problem) when it is not usable.
 */
export function assertStoredHeader(
  errors: ErrorFactory,
  id: string,
  value: unknown,
): SessionHeader {
  const problem = storedHeaderProblem(id, value);
  if (problem !== undefined) throw errors.corrupt(id, `invalid header: ${problem}`);
  return value as SessionHeader;
}
