// Pure rules every adapter applies the same way: the header a save, branch or clone
// produces, the runtime-status size check, router argument checks and the router's
// resolve rule. Adapters keep storage; these keep the contract's meaning in one place.
import type { ErrorFactory } from './errors.js';
import { copyJson } from './input/json-value-copy.js';
import { cloneJson, compareListOrder, nextUpdatedAt } from './session.js';
import type { RouterRow, Session } from './types.js';
import { assertId, assertRouterKey, MAX_RUNTIME_STATUS_BYTES } from './validate.js';

/** A session without its messages and its derived children, as stores keep it. */
export type SessionHeader = Omit<Session<unknown>, 'messages' | 'children'>;

/** The fields of the stored header that `savedHeader` keeps or moves on (all it reads). */
export type SavedOver = Pick<
  SessionHeader,
  'id' | 'createdAt' | 'updatedAt' | 'revision' | 'parentId' | 'branchedAtTurn'
>;

/**
 * The header `save(session)` stores over `stored`: the caller's title, folder, model,
 * provider, counters (absent → 0), metadata, status, archivedAt, mode and state (absent
 * optional fields are cleared); `id`, `createdAt`, `parentId` and `branchedAtTurn` kept
 * from `stored`; `revision + 1`; `updatedAt` strictly after the stored one (see
 * `nextUpdatedAt`). Fresh objects throughout; validate `session` first
 * (`assertSaveInput`). Pure.
 */
export function savedHeader(
  stored: SavedOver,
  session: Session<unknown>,
  now: Date = new Date(),
): SessionHeader {
  const header: SessionHeader = {
    id: stored.id,
    title: session.title,
    folder: session.folder,
    createdAt: new Date(stored.createdAt.getTime()),
    updatedAt: nextUpdatedAt(stored.updatedAt, now),
    model: session.model,
    provider: session.provider,
    // Stryker disable next-line ArithmeticOperator: equivalent — BaseStore's save input arrives normalised (-0 already 0); `+ 0` is for adapters that call this directly.
    tokenCount: (session.tokenCount ?? 0) + 0,
    // Stryker disable next-line ArithmeticOperator: equivalent — as above.
    costUsd: (session.costUsd ?? 0) + 0,
    // Stryker disable next-line ArithmeticOperator: equivalent — as above.
    turnCount: (session.turnCount ?? 0) + 0,
    metadata: { ...(session.metadata ?? {}) },
    status: session.status,
    revision: stored.revision + 1,
  };
  if (stored.parentId !== undefined) header.parentId = stored.parentId;
  if (stored.branchedAtTurn !== undefined) header.branchedAtTurn = stored.branchedAtTurn;
  if (session.archivedAt !== undefined) header.archivedAt = new Date(session.archivedAt.getTime());
  if (session.mode !== undefined) header.mode = session.mode;
  if (session.state !== undefined) header.state = cloneJson(session.state);
  return header;
}

/**
 * The header of a new branch of `parent` at `atTurn` messages: the parent's title,
 * folder, model, provider, mode, state (a deep copy) and counters (so a merge
 * fast-forwards the parent to complete totals), `metadata` = the parent's plus `branchedFrom`, `parentId`,
 * `branchedAtTurn`, status `"active"`, revision 1, created and updated `now`. Check
 * `atTurn` first (`assertBranchPoint`). Pure.
 */
export function branchHeader(
  parent: SessionHeader,
  childId: string,
  atTurn: number,
  now: Date = new Date(),
): SessionHeader {
  const header: SessionHeader = {
    id: childId,
    title: parent.title,
    folder: parent.folder,
    parentId: parent.id,
    createdAt: new Date(now.getTime()),
    updatedAt: new Date(now.getTime()),
    model: parent.model,
    provider: parent.provider,
    tokenCount: parent.tokenCount,
    costUsd: parent.costUsd,
    turnCount: parent.turnCount,
    metadata: { ...parent.metadata, branchedFrom: parent.id },
    status: 'active',
    branchedAtTurn: atTurn,
    revision: 1,
  };
  if (parent.mode !== undefined) header.mode = parent.mode;
  if (parent.state !== undefined) header.state = cloneJson(parent.state);
  return header;
}

/**
 * The header of an independent copy of `source`: every field (deep-copied) except
 * `parentId`, `branchedAtTurn` and `archivedAt`, which it drops; `metadata.clonedFrom`
 * set to the source's id; revision 1, created and updated `now`. Pure.
 */
export function cloneHeader(
  source: SessionHeader,
  newId: string,
  now: Date = new Date(),
): SessionHeader {
  const {
    parentId: _parentId,
    branchedAtTurn: _branchedAtTurn,
    archivedAt: _archivedAt,
    ...copied
  } = structuredClone(source);
  return {
    ...copied,
    id: newId,
    createdAt: new Date(now.getTime()),
    updatedAt: new Date(now.getTime()),
    metadata: { ...copied.metadata, clonedFrom: source.id },
    revision: 1,
  };
}

/**
 * The JSON text to store for a runtime status. Throws `invalid_argument` for a bad id or
 * a value JSON cannot hold, and `too_large` when the UTF-8 text is over
 * `MAX_RUNTIME_STATUS_BYTES` — before any I/O, so nothing is written.
 */
export function runtimeStatusText(errors: ErrorFactory, id: unknown, status: unknown): string {
  assertId(errors, id);
  // Copied once, then serialised: the text is exactly what was validated.
  const text = JSON.stringify(copyJson(errors, status, 'runtime status'));
  // Stryker disable next-line StringLiteral: equivalent — UTF-8 is byteLength's default.
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_RUNTIME_STATUS_BYTES) {
    throw errors.tooLarge(id, 'runtime status', bytes, MAX_RUNTIME_STATUS_BYTES);
  }
  return text;
}

/**
 * Checks the `(channel, chatKey, thread)` of a router call named `method` (`"bind"` …):
 * each a string of at most 1024 chars without NUL; with `required`, channel and chatKey
 * must not be empty (`bind`). Throws `invalid_argument`.
 */
export function assertRouterTuple(
  errors: ErrorFactory,
  method: string,
  channel: unknown,
  chatKey: unknown,
  thread: unknown,
  required = false,
): void {
  assertRouterKey(errors, channel, `${method}: channel`, required);
  assertRouterKey(errors, chatKey, `${method}: chatKey`, required);
  assertRouterKey(errors, thread, `${method}: thread`, false);
}

/**
 * Checks `follow`'s arguments: a non-empty channel, a chat key, and a target that is
 * `""` (clear), `"tui"` or a valid session id. Throws `invalid_argument`.
 */
export function assertFollowArgs(
  errors: ErrorFactory,
  channel: unknown,
  chatKey: unknown,
  target: unknown,
): void {
  assertRouterKey(errors, channel, 'follow: channel', true);
  assertRouterKey(errors, chatKey, 'follow: chatKey', false);
  assertRouterKey(errors, target, 'follow: target', false);
  if (target === '') return; // clears the follow target
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent — "tui" is itself a well-formed id.
  if (target !== FOLLOW_TUI) assertId(errors, target, 'follow: target');
}

/** Checks `resolve`'s `liveSessionId`: `""` or a valid session id. Throws `invalid_argument`. */
export function assertLiveSessionId(errors: ErrorFactory, liveSessionId: unknown): void {
  assertRouterKey(errors, liveSessionId, 'resolve: liveSessionId', false);
  if (liveSessionId !== '') assertId(errors, liveSessionId, 'resolve: liveSessionId');
}

/** The follow target that means "whatever session the TUI has open". */
export const FOLLOW_TUI = 'tui';

/**
 * The router's resolve rule. A follow target of `(channel, chatKey)` wins: `"tui"` gives
 * `liveSessionId` (or the binding when that is `""`), any other target that session id;
 * without a follow target, the binding's session, or `""`. Pure.
 */
export function resolveRoute(
  followTarget: string | undefined,
  liveSessionId: string,
  boundSessionId: string | undefined,
): string {
  if (followTarget !== undefined && followTarget !== '') {
    if (followTarget !== FOLLOW_TUI) return followTarget;
    if (liveSessionId !== '') return liveSessionId;
  }
  return boundSessionId ?? '';
}

/**
 * The order of `recent()`: the most recently bound or touched binding first; bindings of
 * one millisecond by their `(channel, chatKey, thread)` tuple, as `list` orders ids. Use as
 * a sort comparator. Pure.
 */
export function compareRouterRows(
  a: Pick<RouterRow, 'channel' | 'chatKey' | 'thread' | 'updatedAt'>,
  b: Pick<RouterRow, 'channel' | 'chatKey' | 'thread' | 'updatedAt'>,
): number {
  return compareListOrder(routerOrderKey(a), routerOrderKey(b), false);
}

function routerOrderKey(row: Pick<RouterRow, 'channel' | 'chatKey' | 'thread' | 'updatedAt'>) {
  return { updatedAt: row.updatedAt, id: JSON.stringify([row.channel, row.chatKey, row.thread]) };
}
