import type { ErrorFactory } from './errors.js';
import { isValidId, MAX_ID_LENGTH } from './ids.js';
import { assertJsonValue } from './json-value.js';
import { cloneJson } from './session.js';
import type {
  CommitInput,
  EventQuery,
  ListOptions,
  Message,
  Session,
  SessionInput,
  SessionPatch,
} from './types.js';

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
      `invalid ${what} ${describe(id)}: use 1–${MAX_ID_LENGTH} chars of [A-Za-z0-9._-], not starting with "."`,
    );
  }
}

function describe(value: unknown): string {
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

function assertText(
  errors: ErrorFactory,
  value: unknown,
  what: string,
  max: number,
): asserts value is string {
  if (typeof value !== 'string')
    throw errors.invalid(`${what} must be a string, got ${describe(value)}`);
  if (value.length > max) throw errors.invalid(`${what} is longer than ${max} chars`);
  if (value.includes('\u0000')) throw errors.invalid(`${what} contains a NUL character`);
  if (LONE_SURROGATE.test(value)) {
    throw errors.invalid(`${what} contains a lone UTF-16 surrogate (not valid Unicode text)`);
  }
}

// Half of a surrogate pair on its own: UTF-8 cannot encode it, so a backend storing text
// as UTF-8 (PostgreSQL, Redis, files) would silently turn it into U+FFFD. Rejected up
// front so every backend returns exactly the text it was given.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

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

function assertAmount(errors: ErrorFactory, value: unknown, what: string): asserts value is number {
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
function isIntegerUpTo(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max;
}

function assertMetadata(
  errors: ErrorFactory,
  value: unknown,
  what: string,
  allowNull: boolean,
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw errors.invalid(`${what} must be an object of strings`);
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    // A Map or class instance would be stored as {}: reject rather than lose its data.
    throw errors.invalid(`${what} must be a plain object of strings`);
  }
  for (const [k, v] of Object.entries(value)) {
    assertText(errors, k, `${what} key`, MAX_SHORT_TEXT_LENGTH);
    if (k === '') throw errors.invalid(`${what} has an empty key`);
    if (allowNull && v === null) continue;
    assertText(errors, v, `${what}.${k}`, 1 << 20);
  }
}

const SESSION_KEYS = [
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

function assertMessages(
  errors: ErrorFactory,
  value: unknown,
  what: string,
): asserts value is unknown[] {
  if (!Array.isArray(value)) throw errors.invalid(`${what} must be an array`);
  // Each message is a JSON value of its own: the 512-level limit counts from the message.
  for (let i = 0; i < value.length; i++) {
    if (value[i] === undefined) throw errors.invalid(`${what}: $[${i}] is undefined`);
    assertJsonValue(errors, value[i], `${what}[${i}]`);
  }
}

/** Validates the fields shared by create and save; `where` names the call. */
function assertSessionFields(
  errors: ErrorFactory,
  s: Record<string, unknown>,
  where: string,
): void {
  assertKnownKeys(errors, s, SESSION_KEYS, where);
  assertId(errors, s.id);
  const id = s.id as string;
  if (s.title !== undefined) assertText(errors, s.title, `${where}: title`, MAX_TITLE_LENGTH);
  for (const key of ['folder', 'status', 'model', 'provider'] as const) {
    if (s[key] !== undefined) assertText(errors, s[key], `${where}: ${key}`, MAX_SHORT_TEXT_LENGTH);
  }
  if (s.mode !== undefined) assertText(errors, s.mode, `${where}: mode`, MAX_SHORT_TEXT_LENGTH);
  if (s.parentId !== undefined) {
    assertId(errors, s.parentId, 'parent id');
    if (s.parentId === id)
      throw errors.invalid(`${where}: session "${id}" cannot be its own parent`, id);
  }
  for (const key of ['createdAt', 'updatedAt', 'archivedAt'] as const) {
    if (s[key] !== undefined) assertDate(errors, s[key], `${where}: ${key}`);
  }
  if (s.tokenCount !== undefined) assertCount(errors, s.tokenCount, `${where}: tokenCount`);
  if (s.turnCount !== undefined) assertCount(errors, s.turnCount, `${where}: turnCount`);
  if (s.costUsd !== undefined) assertAmount(errors, s.costUsd, `${where}: costUsd`);
  if (s.branchedAtTurn !== undefined)
    assertMessageIndex(errors, s.branchedAtTurn, `${where}: branchedAtTurn`);
  if (s.metadata !== undefined) assertMetadata(errors, s.metadata, `${where}: metadata`, false);
  if (s.messages !== undefined) assertMessages(errors, s.messages, `${where}: messages`);
  if (s.state !== undefined) assertJsonValue(errors, s.state, `${where}: state`);
}

/**
 * Validates `create` input and returns the session to store (revision 1, defaults
 * filled, `children` empty, a deep copy of every JSON value). Throws `invalid_argument`.
 */
export function prepareCreate<M = Message>(
  errors: ErrorFactory,
  input: SessionInput<M>,
  now: Date = new Date(),
): Session<M> {
  if (typeof input !== 'object' || input === null)
    throw errors.invalid('create: session must be an object');
  assertSessionFields(errors, input as unknown as Record<string, unknown>, 'create');
  if (input.createdAt && input.updatedAt && input.updatedAt.getTime() < input.createdAt.getTime()) {
    throw errors.invalid('create: updatedAt is before createdAt', input.id);
  }
  // Without a createdAt, a session imported with an old updatedAt was created no later.
  const createdAt = new Date(
    input.createdAt?.getTime() ??
      Math.min(now.getTime(), input.updatedAt?.getTime() ?? Number.POSITIVE_INFINITY),
  );
  const session: Session<M> = {
    id: input.id,
    title: input.title ?? '',
    folder: input.folder ?? '',
    createdAt,
    updatedAt: input.updatedAt ? new Date(input.updatedAt.getTime()) : createdAt,
    model: input.model ?? '',
    provider: input.provider ?? '',
    tokenCount: (input.tokenCount ?? 0) + 0,
    costUsd: (input.costUsd ?? 0) + 0,
    turnCount: (input.turnCount ?? 0) + 0,
    metadata: { ...(input.metadata ?? {}) },
    status: input.status ?? 'active',
    messages: input.messages ? cloneJson(input.messages) : [],
    children: [],
    revision: 1,
  };
  if (input.parentId !== undefined) session.parentId = input.parentId;
  if (input.branchedAtTurn !== undefined) session.branchedAtTurn = input.branchedAtTurn;
  if (input.archivedAt !== undefined) session.archivedAt = new Date(input.archivedAt.getTime());
  if (input.mode !== undefined) session.mode = input.mode;
  if (input.state !== undefined) session.state = cloneJson(input.state);
  return session;
}

/**
 * Validates `save` input: every field of a session, a positive integer `revision` (the
 * expected stored revision). Throws `invalid_argument`.
 */
export function assertSaveInput<M>(errors: ErrorFactory, session: Session<M>): void {
  if (typeof session !== 'object' || session === null)
    throw errors.invalid('save: session must be an object');
  assertSessionFields(errors, session as unknown as Record<string, unknown>, 'save');
  const rev = session.revision;
  if (typeof rev !== 'number' || !Number.isSafeInteger(rev) || rev < 1) {
    throw errors.invalid(
      `save: revision must be a positive integer, got ${String(rev)}`,
      session.id,
    );
  }
  for (const key of ['title', 'folder', 'status', 'model', 'provider'] as const) {
    if (typeof session[key] !== 'string')
      throw errors.invalid(`save: ${key} is required`, session.id);
  }
  if (!Array.isArray(session.messages))
    throw errors.invalid('save: messages is required', session.id);
}

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
const COMMIT_KEYS = [
  'expectedRevision',
  'expectedMessageCount',
  'append',
  'replace',
  'patch',
  'increment',
] as const;

/** Validates a commit's input. Throws `invalid_argument`. */
export function assertCommitInput<M>(
  errors: ErrorFactory,
  id: string,
  input: CommitInput<M>,
): void {
  if (typeof input !== 'object' || input === null)
    throw errors.invalid('commit: input must be an object', id);
  assertKnownKeys(errors, input, COMMIT_KEYS, 'commit');
  if (input.expectedRevision !== undefined) {
    const r = input.expectedRevision;
    if (!Number.isSafeInteger(r) || r < 1) {
      throw errors.invalid(
        `commit: expectedRevision must be a positive integer, got ${String(r)}`,
        id,
      );
    }
  }
  if (input.expectedMessageCount !== undefined) {
    assertCount(errors, input.expectedMessageCount, 'commit: expectedMessageCount');
  }
  if (input.append !== undefined && input.replace !== undefined) {
    throw errors.invalid('commit: append and replace are mutually exclusive', id);
  }
  if (input.append !== undefined) assertMessages(errors, input.append, 'commit: append');
  if (input.replace !== undefined) assertMessages(errors, input.replace, 'commit: replace');
  const p = input.patch as SessionPatch | undefined;
  if (p !== undefined) {
    assertKnownKeys(errors, p, PATCH_KEYS, 'commit: patch');
    if (p.title !== undefined) assertText(errors, p.title, 'patch.title', MAX_TITLE_LENGTH);
    for (const key of ['folder', 'status', 'model', 'provider'] as const) {
      if (p[key] !== undefined) assertText(errors, p[key], `patch.${key}`, MAX_SHORT_TEXT_LENGTH);
    }
    if (p.mode !== undefined && p.mode !== null)
      assertText(errors, p.mode, 'patch.mode', MAX_SHORT_TEXT_LENGTH);
    if (p.tokenCount !== undefined) assertCount(errors, p.tokenCount, 'patch.tokenCount');
    if (p.turnCount !== undefined) assertCount(errors, p.turnCount, 'patch.turnCount');
    if (p.costUsd !== undefined) assertAmount(errors, p.costUsd, 'patch.costUsd');
    if (p.metadata !== undefined) assertMetadata(errors, p.metadata, 'patch.metadata', true);
    if (p.state !== undefined && p.state !== null) assertJsonValue(errors, p.state, 'patch.state');
    if (p.archivedAt !== undefined && p.archivedAt !== null)
      assertDate(errors, p.archivedAt, 'patch.archivedAt');
  }
  if (input.increment !== undefined) {
    assertKnownKeys(
      errors,
      input.increment,
      ['tokenCount', 'costUsd', 'turnCount'],
      'commit: increment',
    );
    for (const [k, v] of Object.entries(input.increment)) {
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v))
        throw errors.invalid(`increment.${k} must be a number`, id);
      if (k !== 'costUsd' && !Number.isSafeInteger(v))
        throw errors.invalid(`increment.${k} must be an integer`, id);
    }
  }
}

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

const LIST_KEYS = [
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

/** Validates `list` options and applies defaults. Throws `invalid_argument`. */
export function normalizeListOptions(
  errors: ErrorFactory,
  opts: ListOptions = {},
): NormalizedListOptions {
  assertKnownKeys(errors, opts, LIST_KEYS, 'list');
  const out: NormalizedListOptions = {
    includeArchived: false,
    oldestFirst: false,
    limit: normalizeLimit(errors, opts.limit),
    offset: 0,
  };
  for (const key of ['folder', 'status', 'query'] as const) {
    const v = opts[key];
    if (v !== undefined) assertText(errors, v, `list: ${key}`, MAX_SHORT_TEXT_LENGTH);
  }
  if (opts.folder !== undefined) out.folder = opts.folder;
  if (opts.status !== undefined) out.status = opts.status;
  if (opts.query !== undefined && opts.query !== '') out.query = opts.query.toLowerCase();
  if (opts.parentId !== undefined) {
    assertId(errors, opts.parentId, 'list: parentId');
    out.parentId = opts.parentId;
  }
  if (opts.after !== undefined) {
    assertDate(errors, opts.after, 'list: after');
    out.after = opts.after.getTime();
  }
  for (const key of ['includeArchived', 'oldestFirst'] as const) {
    const v = opts[key];
    if (v !== undefined && typeof v !== 'boolean')
      throw errors.invalid(`list: ${key} must be a boolean`);
    if (v) out[key] = true;
  }
  if (opts.offset !== undefined) {
    if (typeof opts.offset !== 'number' || !Number.isSafeInteger(opts.offset) || opts.offset < 0) {
      throw errors.invalid(
        `list: offset must be a non-negative integer, got ${String(opts.offset)}`,
      );
    }
    out.offset = opts.offset;
  }
  if (opts.startAfter !== undefined) {
    const c = opts.startAfter as unknown;
    // The documented usage passes the last summary of the previous page: a summary's (or
    // session's) other fields are accepted and ignored; any other key is a typo.
    assertKnownKeys(errors, c, ['updatedAt', 'id', ...SESSION_KEYS], 'list: startAfter');
    const cursor = c as { updatedAt?: unknown; id?: unknown };
    assertDate(errors, cursor.updatedAt, 'list: startAfter.updatedAt');
    assertText(errors, cursor.id, 'list: startAfter.id', MAX_ID_LENGTH);
    out.startAfter = { updatedAt: cursor.updatedAt.getTime(), id: cursor.id };
  }
  return out;
}

/** Validates `events` options. Throws `invalid_argument`. */
export function normalizeEventQuery(
  errors: ErrorFactory,
  query: EventQuery = {},
): { afterSequence: number; limit: number | undefined } {
  assertKnownKeys(errors, query, ['afterSequence', 'limit'], 'events');
  const after = query.afterSequence ?? 0;
  assertCount(errors, after, 'events: afterSequence');
  let limit: number | undefined;
  if (query.limit !== undefined) {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > 10_000) {
      throw errors.invalid(
        `events: limit must be an integer from 1 to 10000, got ${String(query.limit)}`,
      );
    }
    limit = query.limit;
  }
  return { afterSequence: after, limit };
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
