// `list` options and `events` queries: validated once, defaults applied.
import type { ErrorFactory } from '../errors.js';
import { MAX_ID_LENGTH } from '../ids.js';
import {
  assertCount,
  assertDate,
  assertId,
  assertText,
  MAX_SHORT_TEXT_LENGTH,
  normalizeLimit,
} from '../validate.js';
import { readInput, SESSION_KEYS } from './fields.js';

/** List options after validation, with defaults applied and dates as epoch milliseconds. */
export interface NormalizedListOptions {
  folder?: string;
  status?: string;
  parentId?: string;
  after?: number;
  /** Lower-cased. */
  query?: string;
  includeArchived: boolean;
  oldestFirst: boolean;
  limit: number;
  offset: number;
  startAfter?: { updatedAt: number; id: string };
}

/** The option names `Store.list` accepts; any other key is `invalid_argument`. */
export const LIST_OPTION_KEYS = [
  'folder',
  'status',
  'parentId',
  'after',
  'query',
  'includeArchived',
  'oldestFirst',
  'limit',
  'offset',
  'startAfter',
] as const;

/**
 * Validates `list` options (each read once) and applies defaults: `limit` absent or 0 →
 * 50, 1–1000 as given; `offset` 0; `query` lower-cased (`""` is no query); `startAfter`
 * a `{updatedAt, id}` cursor (a summary's other fields are accepted and ignored). Throws
 * `invalid_argument`, also for unknown keys.
 */
export function normalizeListOptions(
  errors: ErrorFactory,
  opts: unknown = {},
): NormalizedListOptions {
  const o = readInput(errors, opts, LIST_OPTION_KEYS, 'list');
  const out: NormalizedListOptions = {
    includeArchived: false,
    oldestFirst: false,
    limit: normalizeLimit(errors, o.limit),
    offset: 0,
  };
  for (const key of ['folder', 'status', 'query'] as const) {
    const v = o[key];
    if (v !== undefined) assertText(errors, v, `list: ${key}`, MAX_SHORT_TEXT_LENGTH);
  }
  if (o.folder !== undefined) out.folder = o.folder as string;
  if (o.status !== undefined) out.status = o.status as string;
  if (o.query !== undefined && o.query !== '') out.query = (o.query as string).toLowerCase();
  if (o.parentId !== undefined) {
    assertId(errors, o.parentId, 'list: parentId');
    out.parentId = o.parentId;
  }
  if (o.after !== undefined) {
    assertDate(errors, o.after, 'list: after');
    out.after = Date.prototype.getTime.call(o.after);
  }
  for (const key of ['includeArchived', 'oldestFirst'] as const) {
    const v = o[key];
    if (v !== undefined && typeof v !== 'boolean') {
      throw errors.invalid(`list: ${key} must be a boolean`);
    }
    if (v) out[key] = true;
  }
  if (o.offset !== undefined) {
    const offset = o.offset;
    if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
      throw errors.invalid(`list: offset must be a non-negative integer, got ${String(offset)}`);
    }
    out.offset = offset;
  }
  if (o.startAfter !== undefined) {
    // The documented usage passes the last summary of the previous page: a summary's (or
    // session's) other fields are accepted and ignored; any other key is a typo.
    const cursor = readInput(
      errors,
      o.startAfter,
      ['updatedAt', 'id', ...SESSION_KEYS],
      'list: startAfter',
    );
    assertDate(errors, cursor.updatedAt, 'list: startAfter.updatedAt');
    assertText(errors, cursor.id, 'list: startAfter.id', MAX_ID_LENGTH);
    out.startAfter = { updatedAt: Date.prototype.getTime.call(cursor.updatedAt), id: cursor.id };
  }
  return out;
}

/** Largest `limit` of an `events` query. */
export const MAX_EVENTS_LIMIT = 10_000;

/**
 * Validates `events` options (`afterSequence` a non-negative integer, default 0; `limit`
 * 1–10000, default all). Throws `invalid_argument`, also for unknown keys.
 */
export function normalizeEventQuery(
  errors: ErrorFactory,
  query: unknown = {},
): { afterSequence: number; limit: number | undefined } {
  const q = readInput(errors, query, ['afterSequence', 'limit'], 'events');
  const after = q.afterSequence ?? 0;
  assertCount(errors, after, 'events: afterSequence');
  let limit: number | undefined;
  if (q.limit !== undefined) {
    const l = q.limit;
    if (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || l > MAX_EVENTS_LIMIT) {
      throw errors.invalid(
        `events: limit must be an integer from 1 to ${MAX_EVENTS_LIMIT}, got ${String(l)}`,
      );
    }
    limit = l;
  }
  return { afterSequence: after, limit };
}
