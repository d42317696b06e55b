// `commit` input: validated and copied once.
import type { ErrorFactory } from '../errors.js';
import type { CommitInput, CounterIncrement, JsonValue, SessionPatch } from '../types.js';
import {
  assertAmount,
  assertCount,
  assertMessageIndex,
  assertText,
  MAX_SHORT_TEXT_LENGTH,
  MAX_TITLE_LENGTH,
} from '../validate.js';
import { copyDate, copyMessages, copyMetadata, readInput } from './fields.js';
import { copyJson } from './json-value-copy.js';

/** Longest `operationId` of a commit. */
export const MAX_OPERATION_ID_LENGTH = 256;
/**
 * How many operation ids a session remembers at least: the ids of its last 1,000 commits
 * that carried one. A repeat of an id older than that (or of a deleted session's id)
 * applies again.
 */
export const MAX_REMEMBERED_OPERATIONS = 1000;

const COMMIT_KEYS = [
  'expectedRevision',
  'expectedMessageCount',
  'append',
  'replace',
  'truncate',
  'operationId',
  'patch',
  'increment',
] as const;

const PATCH_KEYS = [
  'title',
  'folder',
  'status',
  'model',
  'provider',
  'tokenCount',
  'costUsd',
  'turnCount',
  'metadata',
  'state',
  'archivedAt',
  'mode',
] as const;

/**
 * Validates a commit's input and returns a copy read once from it: only the keys given,
 * messages and JSON values deep-copied, dates copied. Rules: `expectedRevision` a positive
 * integer; `expectedMessageCount` and `truncate` non-negative integers (`truncate` at most
 * 2^31 − 1; whether it fits the stored history is checked against it); `replace` excludes
 * `append` and `truncate`; `operationId` 1–256 chars without NUL or a lone surrogate;
 * patch fields as `save` checks them (`null` clears `state`, `archivedAt`, `mode` and a
 * metadata key); increments finite numbers, integers for the integer counters. Throws
 * `invalid_argument`.
 */
export function normalizeCommitInput<M>(
  errors: ErrorFactory,
  id: string,
  input: CommitInput<M>,
): CommitInput<M> {
  if (typeof input !== 'object' || input === null) {
    throw errors.invalid('commit: input must be an object', id);
  }
  const c = readInput(errors, input, COMMIT_KEYS, 'commit');
  const out: CommitInput<M> = {};
  if (c.expectedRevision !== undefined) {
    const r = c.expectedRevision;
    if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 1) {
      throw errors.invalid(
        `commit: expectedRevision must be a positive integer, got ${String(r)}`,
        id,
      );
    }
    out.expectedRevision = r;
  }
  if (c.expectedMessageCount !== undefined) {
    assertCount(errors, c.expectedMessageCount, 'commit: expectedMessageCount');
    out.expectedMessageCount = c.expectedMessageCount;
  }
  if (c.replace !== undefined && (c.append !== undefined || c.truncate !== undefined)) {
    const other = c.append !== undefined ? 'append' : 'truncate';
    throw errors.invalid(`commit: replace and ${other} are mutually exclusive`, id);
  }
  if (c.truncate !== undefined) {
    assertMessageIndex(errors, c.truncate, 'commit: truncate');
    out.truncate = c.truncate;
  }
  if (c.append !== undefined) out.append = copyMessages(errors, c.append, 'commit: append') as M[];
  if (c.replace !== undefined) {
    out.replace = copyMessages(errors, c.replace, 'commit: replace') as M[];
  }
  if (c.operationId !== undefined) {
    assertText(errors, c.operationId, 'commit: operationId', MAX_OPERATION_ID_LENGTH);
    if (c.operationId === '') throw errors.invalid('commit: operationId must not be empty', id);
    out.operationId = c.operationId;
  }
  if (c.patch !== undefined) out.patch = readPatch(errors, c.patch);
  if (c.increment !== undefined) out.increment = readIncrement(errors, id, c.increment);
  return out;
}

function readPatch(errors: ErrorFactory, patch: unknown): SessionPatch {
  const p = readInput(errors, patch, PATCH_KEYS, 'commit: patch');
  const out: SessionPatch = {};
  if (p.title !== undefined) {
    assertText(errors, p.title, 'patch.title', MAX_TITLE_LENGTH);
    out.title = p.title;
  }
  for (const key of ['folder', 'status', 'model', 'provider'] as const) {
    const v = p[key];
    if (v === undefined) continue;
    assertText(errors, v, `patch.${key}`, MAX_SHORT_TEXT_LENGTH);
    out[key] = v;
  }
  if (p.mode !== undefined) {
    if (p.mode !== null) assertText(errors, p.mode, 'patch.mode', MAX_SHORT_TEXT_LENGTH);
    out.mode = p.mode;
  }
  for (const key of ['tokenCount', 'turnCount'] as const) {
    const v = p[key];
    if (v === undefined) continue;
    assertCount(errors, v, `patch.${key}`);
    out[key] = v;
  }
  if (p.costUsd !== undefined) {
    assertAmount(errors, p.costUsd, 'patch.costUsd');
    out.costUsd = p.costUsd;
  }
  if (p.metadata !== undefined)
    out.metadata = copyMetadata(errors, p.metadata, 'patch.metadata', true);
  if (p.state !== undefined) {
    out.state = p.state === null ? null : copyJson<JsonValue>(errors, p.state, 'patch.state');
  }
  if (p.archivedAt !== undefined) {
    out.archivedAt =
      p.archivedAt === null ? null : copyDate(errors, p.archivedAt, 'patch.archivedAt');
  }
  return out;
}

function readIncrement(errors: ErrorFactory, id: string, increment: unknown): CounterIncrement {
  const inc = readInput(
    errors,
    increment,
    ['tokenCount', 'costUsd', 'turnCount'],
    'commit: increment',
  );
  const out: CounterIncrement = {};
  for (const k of ['tokenCount', 'costUsd', 'turnCount'] as const) {
    const v = inc[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw errors.invalid(`increment.${k} must be a number`, id);
    }
    if (k !== 'costUsd' && !Number.isSafeInteger(v)) {
      throw errors.invalid(`increment.${k} must be an integer`, id);
    }
    out[k] = v;
  }
  return out;
}

/**
 * Validates a commit's input for an adapter that does not implement `truncate` and
 * `operationId` (one written against an earlier kit): the rules of `normalizeCommitInput`,
 * and either key is `invalid_argument` — accepting one without keeping its promise would
 * append where the caller dropped, or apply a retry twice. Adapters on `BaseStore` get
 * `normalizeCommitInput`'s copy instead. Throws `invalid_argument`.
 */
export function assertCommitInput<M>(
  errors: ErrorFactory,
  id: string,
  input: CommitInput<M>,
): void {
  const commit = normalizeCommitInput(errors, id, input);
  for (const key of ['truncate', 'operationId'] as const) {
    if (commit[key] !== undefined) {
      throw errors.invalid(`commit: ${key} is not supported by this store`, id);
    }
  }
}
