// loadMessages windows: validation of `{last}` / `{offset, limit}` and the range they select.
import type { ErrorFactory } from './errors.js';
import { readInput } from './input/fields.js';
import type { MessageWindowQuery } from './types.js';
import { assertCount } from './validate.js';

/** A validated `loadMessages` window: everything, the last `n`, or a range from `offset`. */
export type NormalizedMessageWindow =
  | { kind: 'all' }
  | { kind: 'last'; last: number }
  | { kind: 'range'; offset: number; limit: number | undefined };

/**
 * Validates `loadMessages`'s window: absent or `{}` → the whole history; `{last}`; or
 * `{offset?, limit?}` (offset default 0, limit default to the end). Every value a
 * non-negative safe integer; `last` with `offset`/`limit`, or an unknown key →
 * `invalid_argument`.
 */
export function normalizeMessageWindow(
  errors: ErrorFactory,
  window: MessageWindowQuery | undefined,
): NormalizedMessageWindow {
  if (window === undefined) return { kind: 'all' };
  const w = readInput(errors, window, ['last', 'offset', 'limit'], 'loadMessages: window');
  const { last, offset, limit } = w;
  for (const [key, v] of [
    ['last', last],
    ['offset', offset],
    ['limit', limit],
  ] as const) {
    if (v !== undefined) assertCount(errors, v, `loadMessages: ${key}`);
  }
  if (last !== undefined) {
    if (offset !== undefined || limit !== undefined) {
      throw errors.invalid('loadMessages: give either {last} or {offset, limit}, not both');
    }
    return { kind: 'last', last: last as number };
  }
  if (offset === undefined && limit === undefined) return { kind: 'all' };
  return {
    kind: 'range',
    offset: (offset as number | undefined) ?? 0,
    limit: limit as number | undefined,
  };
}

/**
 * The half-open message range `[start, end)` a window selects from a history of
 * `messageCount` messages. A window past the end is empty (`start === end`). Pure.
 */
export function windowBounds(
  window: NormalizedMessageWindow,
  messageCount: number,
): { start: number; end: number } {
  switch (window.kind) {
    case 'all':
      return { start: 0, end: messageCount };
    case 'last':
      return { start: Math.max(0, messageCount - window.last), end: messageCount };
    case 'range': {
      const start = Math.min(window.offset, messageCount);
      const end =
        window.limit === undefined ? messageCount : Math.min(messageCount, start + window.limit);
      return { start, end };
    }
  }
}
