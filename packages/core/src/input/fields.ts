// Reading a caller's input object once: its own keys checked against the known ones, each
// value read exactly once, then validated and copied field by field.
import type { ErrorFactory } from '../errors.js';
import type { JsonValue } from '../types.js';
import {
  assertAmount,
  assertCount,
  assertDate,
  assertId,
  assertMessageIndex,
  assertText,
  MAX_SHORT_TEXT_LENGTH,
  MAX_TITLE_LENGTH,
} from '../validate.js';
import { copyJson, objectKind, readEntries, readKeys, readValue } from './json-value-copy.js';

/**
 * The own enumerable fields of an input object, each read once, in a fresh object without a
 * prototype. Throws `invalid_argument` when `input` is not a plain object or array-free
 * object (`what must be an object`) or has a key outside `allowed` (naming it).
 */
export function readInput(
  errors: ErrorFactory,
  input: unknown,
  allowed: readonly string[],
  what: string,
): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || objectKind(errors, input, what) === 'array') {
    throw errors.invalid(`${what} must be an object`);
  }
  const out: Record<string, unknown> = Object.create(null);
  // Key by key, with no list of pairs in between: a commit reads its input this way.
  for (const key of readKeys(errors, input, what)) {
    if (!allowed.includes(key)) {
      throw errors.invalid(`${what}: unknown option "${key}" (known: ${allowed.join(', ')})`);
    }
    out[key] = readValue(errors, input, key, what);
  }
  return out;
}

/** A copy of a valid `Date` in the years 1–9999 (`assertDate`); throws `invalid_argument`. */
export function copyDate(errors: ErrorFactory, value: unknown, what: string): Date {
  assertDate(errors, value, what);
  // Date.prototype.getTime, not the value's own: a subclass cannot lie about its time.
  return new Date(Date.prototype.getTime.call(value));
}

/**
 * A copy of a metadata object: a plain object of strings (keys 1–1024 chars, values up to
 * 1 MiB chars, no NUL or lone surrogate). With `allowNull` (a commit's patch), a `null`
 * value removes the key. Keys such as `__proto__` are ordinary own keys of the copy.
 * Throws `invalid_argument`.
 */
export function copyMetadata(
  errors: ErrorFactory,
  value: unknown,
  what: string,
  allowNull: boolean,
): Record<string, string | null> {
  if (typeof value !== 'object' || value === null) {
    throw errors.invalid(`${what} must be an object of strings`);
  }
  const kind = objectKind(errors, value, what);
  if (kind === 'array') throw errors.invalid(`${what} must be an object of strings`);
  // A Map or class instance would be stored as {}: reject rather than lose its data.
  if (kind !== 'plain') throw errors.invalid(`${what} must be a plain object of strings`);
  const out: Record<string, string | null> = {};
  for (const [k, v] of readEntries(errors, value, what)) {
    assertText(errors, k, `${what} key`, MAX_SHORT_TEXT_LENGTH);
    if (k === '') throw errors.invalid(`${what} has an empty key`);
    if (!(allowNull && v === null)) assertText(errors, v, `${what}.${k}`, 1 << 20);
    Object.defineProperty(out, k, {
      value: v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * A validated copy of an array of messages: each message a JSON value of its own (the
 * 512-level limit counts from the message), read once. Throws `invalid_argument`.
 */
export function copyMessages(errors: ErrorFactory, value: unknown, what: string): unknown[] {
  if (typeof value !== 'object' || value === null || objectKind(errors, value, what) !== 'array') {
    throw errors.invalid(`${what} must be an array`);
  }
  const length = readValue(errors, value, 'length', what) as number;
  const out: unknown[] = new Array(length);
  for (let i = 0; i < length; i++) {
    const message = readValue(errors, value, i, what);
    if (message === undefined) throw errors.invalid(`${what}: $[${i}] is undefined`);
    out[i] = copyJson(errors, message, `${what}[${i}]`);
  }
  return out;
}

/** The keys a session object may have (create, save). */
export const SESSION_KEYS = [
  'id',
  'title',
  'folder',
  'parentId',
  'createdAt',
  'updatedAt',
  'model',
  'provider',
  'tokenCount',
  'costUsd',
  'turnCount',
  'metadata',
  'status',
  'messages',
  'children',
  'branchedAtTurn',
  'revision',
  'archivedAt',
  'mode',
  'state',
  // Accepted so a summary or a loaded session can be passed back; always ignored.
  'messageCount',
] as const;

/** The validated, copied fields of a session object; absent fields are `undefined`. */
export interface SessionFields {
  id: string;
  title?: string | undefined;
  folder?: string | undefined;
  status?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
  mode?: string | undefined;
  parentId?: string | undefined;
  createdAt?: Date | undefined;
  updatedAt?: Date | undefined;
  archivedAt?: Date | undefined;
  tokenCount?: number | undefined;
  turnCount?: number | undefined;
  costUsd?: number | undefined;
  branchedAtTurn?: number | undefined;
  metadata?: Record<string, string> | undefined;
  messages?: unknown[] | undefined;
  state?: JsonValue | undefined;
  /** The raw `revision` (save checks it; create ignores it). */
  revision?: unknown;
}

/**
 * Reads, validates and copies the fields of a session object (`create`, `save`); `where`
 * names the call. Every text field has its length cap, every date its range, every JSON
 * value its limits. Throws `invalid_argument`.
 */
export function readSessionFields(
  errors: ErrorFactory,
  input: unknown,
  where: string,
): SessionFields {
  const s = readInput(errors, input, SESSION_KEYS, where);
  assertId(errors, s.id);
  const id = s.id;
  const f: SessionFields = { id, revision: s.revision };
  if (s.title !== undefined) {
    assertText(errors, s.title, `${where}: title`, MAX_TITLE_LENGTH);
    f.title = s.title;
  }
  for (const key of ['folder', 'status', 'model', 'provider', 'mode'] as const) {
    const v = s[key];
    if (v === undefined) continue;
    assertText(errors, v, `${where}: ${key}`, MAX_SHORT_TEXT_LENGTH);
    f[key] = v;
  }
  if (s.parentId !== undefined) {
    assertId(errors, s.parentId, 'parent id');
    if (s.parentId === id) {
      throw errors.invalid(`${where}: session "${id}" cannot be its own parent`, id);
    }
    f.parentId = s.parentId;
  }
  for (const key of ['createdAt', 'updatedAt', 'archivedAt'] as const) {
    if (s[key] !== undefined) f[key] = copyDate(errors, s[key], `${where}: ${key}`);
  }
  for (const key of ['tokenCount', 'turnCount'] as const) {
    const v = s[key];
    if (v === undefined) continue;
    assertCount(errors, v, `${where}: ${key}`);
    f[key] = v;
  }
  if (s.costUsd !== undefined) {
    assertAmount(errors, s.costUsd, `${where}: costUsd`);
    f.costUsd = s.costUsd;
  }
  if (s.branchedAtTurn !== undefined) {
    assertMessageIndex(errors, s.branchedAtTurn, `${where}: branchedAtTurn`);
    f.branchedAtTurn = s.branchedAtTurn;
  }
  if (s.metadata !== undefined) {
    f.metadata = copyMetadata(errors, s.metadata, `${where}: metadata`, false) as Record<
      string,
      string
    >;
  }
  if (s.messages !== undefined) f.messages = copyMessages(errors, s.messages, `${where}: messages`);
  if (s.state !== undefined) f.state = copyJson<JsonValue>(errors, s.state, `${where}: state`);
  return f;
}
