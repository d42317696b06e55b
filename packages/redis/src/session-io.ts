// Reads and writes of one session's keys (one slot), plus the index steps that go with
// them. Every write is one Lua script that checks the life and write version its plan was
// made from, and records its token in the session's write ledger; core's kit plans it.
import type { CommitResult } from '@sessionkit/core';
import { type SessionState, throwIfAborted } from '@sessionkit/core/adapter';
import { call, command } from './calls.js';
import { decodeCount, decodeHeader, decodeLineage, encodeHeader } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import type { FilterValues } from './keys.js';
import { SCRIPTS } from './lua/index.js';
import { SEARCH_FORMAT } from './lua/session-scripts.js';
import { confirmedCall } from './replicas.js';
import { outcomeNumbers, writeOnce } from './write-ledger.js';

/**
 * The kit's `SessionState` of a session as this store keeps it, with what its conditional
 * writes check.
 */
export interface VersionedState extends SessionState {
  /**
   * The life token `g`: unique per create, so a state remembered of a deleted session never
   * passes for the session later created under its id. `''` for records stored before it.
   */
  life: string;
  /** The write version `w`: what a conditional write checks (every write moves it). */
  version: number;
  /**
   * The life token `q` of the parent this session was made or promoted under, so a merge
   * or a promotion never takes a re-created parent for it. `''`: none, or stored before it.
   */
  parentLife: string;
}

/** The state from `[header, count, lineage, version, parent, life, parentLife, …]`; throws `corrupt`. */
export function stateOf(id: string, reply: readonly unknown[]): VersionedState {
  const header = decodeHeader(id, reply[0]);
  const messageCount = decodeCount(id, reply[1]);
  const version = Number(reply[3]);
  if (typeof reply[3] !== 'string' || !Number.isSafeInteger(version)) {
    throw errors.corrupt(id, 'the write version is not a number');
  }
  const life = typeof reply[5] === 'string' ? reply[5] : '';
  const parentLife = typeof reply[6] === 'string' ? reply[6] : '';
  return { header, messageCount, lineage: decodeLineage(reply[2]), life, version, parentLife };
}

/** `state` after a write that landed at `version` (same life, same parent life). */
export function written(
  before: Pick<VersionedState, 'life' | 'parentLife'>,
  state: SessionState,
  version: number,
): VersionedState {
  const { header, lineage, messageCount } = state;
  return {
    header,
    lineage,
    messageCount,
    life: before.life,
    parentLife: before.parentLife,
    version,
  };
}

/** A commit result from its recorded text `revision count updatedAt`; throws `corrupt`. */
export function resultOf(id: string, text: string): CommitResult {
  const [revision, messageCount, updatedAt] = text.trim().split(' ').map(Number);
  if (![revision, messageCount, updatedAt].every(Number.isSafeInteger)) {
    throw errors.corrupt(id, `a recorded operation is damaged (${text.slice(0, 40)})`);
  }
  return {
    revision: revision as number,
    messageCount: messageCount as number,
    updatedAt: new Date(updatedAt as number),
  };
}

/** A session's state read in one script, with what commit and repair need beside it. */
export interface StateRead {
  state: VersionedState;
  /** The result recorded for the operation id asked about, if any. */
  recorded: CommitResult | undefined;
  /** Whether the search texts are this release's and one per message. */
  searchCurrent: boolean;
}

/** The stored state of `id` (and the result of `operationId`), or `undefined` when missing. */
export async function readStateDetail(
  ctx: StoreContext,
  id: string,
  operationId = '',
): Promise<StateRead | undefined> {
  const reply = await call<unknown[] | null>(
    ctx,
    SCRIPTS.readState,
    ctx.keys.sessionKeyList(id),
    [operationId],
    `reading session "${id}"`,
  );
  if (reply === null) return undefined;
  const state = stateOf(id, reply);
  const recorded = typeof reply[9] === 'string' ? resultOf(id, reply[9]) : undefined;
  const searchCurrent = reply[7] === SEARCH_FORMAT && Number(reply[8]) === state.messageCount;
  return { state, recorded, searchCurrent };
}

/** The stored state of `id`, or `undefined` when there is no such session. */
export async function readState(
  ctx: StoreContext,
  id: string,
): Promise<VersionedState | undefined> {
  return (await readStateDetail(ctx, id))?.state;
}

/** A new session's data: its planned state, its messages and their search texts. */
export interface NewRecord {
  state: SessionState;
  /** The messages' JSON texts. */
  messages: readonly string[];
  /** The search text of each message (`searchTextsOf`). */
  texts: readonly string[];
  /** The create's token (`writeToken()`), also the new session's life token. */
  token: string;
  /** The life token of the parent read when it was planned (`''`: none). */
  parentLife: string;
}

/**
 * Stores a new session. The index is written first (order entry, pending mark, parent
 * link), then the session's keys in one script, then the pending mark is cleared: a
 * process that dies in between leaves an entry that listing skips (its session does not
 * exist yet) and drops once it is stale, never a session the listing cannot see.
 * Throws `exists` (checked before the index is touched, and again atomically); `aborted`
 * before the first write when `signal` fired.
 */
export async function insertRecord(
  ctx: StoreContext,
  record: NewRecord,
  operation: 'create' | 'branch' | 'clone',
  signal?: AbortSignal,
): Promise<void> {
  const { header, lineage } = record.state;
  const id = header.id;
  const k = ctx.keys;
  if (await sessionExists(ctx, id)) throw errors.exists(id);
  throwIfAborted(errors, signal, operation, id);
  const indexKeys = [k.order, k.pending];
  if (header.parentId !== undefined) indexKeys.push(k.children(header.parentId));
  indexKeys.push(...k.filterIndexesOf(header));
  const score = header.updatedAt.getTime();
  // Confirmed by replicas when asked: an entry lost in a failover would hide the session.
  await confirmedCall(
    ctx,
    SCRIPTS.indexRegister,
    indexKeys,
    [score, id, Date.now(), header.parentId === undefined ? '0' : '1'],
    'indexing a session',
  );
  const created = await writeOnce(
    ctx,
    SCRIPTS.create,
    id,
    k.sessionKeyList(id),
    [
      encodeHeader(header),
      JSON.stringify(lineage),
      header.parentId ?? '',
      record.token,
      ctx.ttlMs,
      record.parentLife,
      record.messages.length,
      ...record.messages,
      ...record.texts,
    ],
    record.token,
    `creating session "${id}"`,
  );
  // Either way the create is over: a lost race leaves at most a later order score (healed
  // by the next listing) and a parent link its session does not confirm (never read).
  await call(ctx, SCRIPTS.indexUnpend, [k.pending], [id], 'indexing a session');
  if (created !== 'c') throw errors.exists(id);
}

/** Whether any record (readable or not) is stored under `id`. */
export async function sessionExists(ctx: StoreContext, id: string): Promise<boolean> {
  const found = await command(ctx, `reading session "${id}"`, () =>
    ctx.client.exists(ctx.keys.session(id).meta),
  );
  return Number(found) === 1;
}

/** How a write changes the stored messages (the kit's `MessageChange`, as JSON texts). */
export interface StoredChange {
  /** `append`: keep all; `truncate`: keep the first `keep`; `replace`: keep none. */
  mode: 'append' | 'truncate' | 'replace';
  keep: number;
  /** The added messages' JSON texts and their search texts, as many of each. */
  messages: readonly string[];
  texts: readonly string[];
}

/** A write that leaves the messages as they are. */
export const NO_MESSAGES: StoredChange = { mode: 'append', keep: 0, messages: [], texts: [] };

/** One conditional write of an existing session. */
export interface RecordWrite {
  id: string;
  /** The token of the write call (`writeToken()`): the same for all its attempts. */
  token: string;
  /**
   * The state the plan was made from: its life and write version (what the write checks)
   * and its header (the filter indexes the session leaves when the write changes them).
   */
  expected: Pick<VersionedState, 'life' | 'version'> & { header: FilterValues };
  /** The planned state. */
  state: SessionState;
  change: StoredChange;
  /** A commit's operation id: recorded with the write, or answered if already recorded. */
  operationId?: string | undefined;
  /** A promotion's new parent's life token; absent: the parent does not change. */
  parentLife?: string | undefined;
}

/** What a conditional write found. */
export type WriteOutcome =
  | {
      kind: 'written';
      version: number;
      /** The session's search texts were not this release's: left for `rebuildSearchTexts`. */
      rebuild: boolean;
    }
  | { kind: 'replayed'; result: CommitResult }
  | { kind: 'missing' }
  | { kind: 'moved'; current: VersionedState };

/**
 * Writes `w` if the stored life and write version are still `w.expected` (one script on
 * the session's slot, with the listing order and filter indexes inside it on standalone
 * Redis). On a Cluster the filter indexes the session joins get their entries before the
 * write, and the order entry and the filter entries move in a second step after it.
 * Returns `replayed` when the session already recorded `w.operationId` (nothing written),
 * `moved` with the current state when another write came first. A write whose token the
 * ledger already holds (an earlier attempt of the same call landed) is `written` without
 * writing again.
 */
export async function writeRecord(ctx: StoreContext, w: RecordWrite): Promise<WriteOutcome> {
  const keys = ctx.keys.sessionKeyList(w.id);
  const { header, lineage, messageCount } = w.state;
  const c = w.change;
  const score = header.updatedAt.getTime();
  const joined = ctx.keys.filterIndexesOf(header);
  const before = ctx.keys.filterIndexesOf(w.expected.header);
  const left = before.filter((key) => !joined.includes(key));
  if (!ctx.cluster) {
    keys.push(ctx.keys.order, ...joined, ...left);
  } else {
    const entering = joined.filter((key) => !before.includes(key));
    // Confirmed by replicas when asked, like a create's entries: one lost in a failover
    // would hide the session from listings filtered on its new value.
    if (entering.length > 0) {
      await confirmedCall(ctx, SCRIPTS.indexAdd, entering, [score, w.id], 'indexing a session');
    }
  }
  const reply = await writeOnce<unknown[]>(
    ctx,
    SCRIPTS.write,
    w.id,
    keys,
    [
      w.token,
      w.expected.life,
      w.expected.version,
      encodeHeader(header),
      header.revision,
      JSON.stringify(lineage),
      c.mode,
      ctx.ttlMs,
      c.keep,
      header.parentId ?? '',
      messageCount,
      score,
      w.id,
      w.operationId ?? '',
      w.parentLife ?? '-',
      c.messages.length,
      joined.length,
      ...c.messages,
      ...c.texts,
    ],
    w.token,
    `writing session "${w.id}"`,
  );
  if (typeof reply !== 'string') {
    if (Number(reply[0]) === 0) return { kind: 'missing' };
    return { kind: 'moved', current: stateOf(w.id, reply.slice(1)) };
  }
  if (reply.startsWith('p')) return { kind: 'replayed', result: resultOf(w.id, reply.slice(1)) };
  if (ctx.cluster) await ctx.orderWrites.set(w.id, score, joined, left);
  const [version, , , , rebuild] = outcomeNumbers(reply);
  if (!reply.startsWith('w') || !Number.isSafeInteger(version)) {
    throw errors.corrupt(w.id, `unexpected outcome of a write (${reply.slice(0, 40)})`);
  }
  return { kind: 'written', version: version as number, rebuild: rebuild === 1 };
}
