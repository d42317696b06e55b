// Reads and writes of one session's keys (one slot), plus the index steps that go with
// them. Every write is one Lua script that checks the life and write version its header
// was computed from, and records its token in the session's write ledger; core's kit
// computes the header.
import type { HistoryLineage, SessionHeader } from '@sessionkit/core/adapter';
import { call, command } from './calls.js';
import { decodeCount, decodeHeader, decodeLineage, encodeHeader } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { outcomeNumbers, writeOnce } from './write-ledger.js';

/** A session as stored, without its messages. */
export interface StoredState {
  header: SessionHeader;
  messageCount: number;
  lineage: HistoryLineage;
  /**
   * The life token `g`: unique per create, so a state remembered of a deleted session never
   * passes for the session later created under its id. `''` for records stored before it.
   */
  life: string;
  /** The write version `w`: what a conditional write checks (every write moves it). */
  version: number;
}

/** The state from `[header, count, lineage, version, parent, life, …]`; throws `corrupt`. */
export function stateOf(id: string, reply: readonly unknown[]): StoredState {
  const header = decodeHeader(id, reply[0]);
  const messageCount = decodeCount(id, reply[1]);
  const version = Number(reply[3]);
  if (typeof reply[3] !== 'string' || !Number.isSafeInteger(version)) {
    throw errors.corrupt(id, 'the write version is not a number');
  }
  const life = typeof reply[5] === 'string' ? reply[5] : '';
  return { header, messageCount, lineage: decodeLineage(reply[2]), life, version };
}

/** The stored state of `id`, or `undefined` when there is no such session. */
export async function readState(ctx: StoreContext, id: string): Promise<StoredState | undefined> {
  const reply = await readStateReply(ctx, id);
  return reply === null ? undefined : stateOf(id, reply);
}

/** The state of `id` and whether its search text key exists (for `repair()`). */
export async function readStateForRepair(
  ctx: StoreContext,
  id: string,
): Promise<(StoredState & { hasText: boolean }) | undefined> {
  const reply = await readStateReply(ctx, id);
  return reply === null ? undefined : { ...stateOf(id, reply), hasText: Number(reply[6]) === 1 };
}

function readStateReply(ctx: StoreContext, id: string): Promise<unknown[] | null> {
  return call<unknown[] | null>(
    ctx,
    SCRIPTS.readState,
    ctx.keys.sessionKeyList(id),
    [],
    `reading session "${id}"`,
  );
}

/** The stored state of `id`; throws `not_found`. */
export async function requireState(ctx: StoreContext, id: string): Promise<StoredState> {
  const state = await readState(ctx, id);
  if (state === undefined) throw errors.notFound(id);
  return state;
}

/** A new session's data. */
export interface NewRecord {
  header: SessionHeader;
  lineage: HistoryLineage;
  /** The messages' JSON texts. */
  messages: readonly string[];
  searchText: string;
  /** The create's token (`writeToken()`), also the new session's life token. */
  token: string;
}

/**
 * Stores a new session. The index is written first (order entry, pending mark, parent
 * link), then the session's keys in one script, then the pending mark is cleared: a
 * process that dies in between leaves an entry that listing skips (its session does not
 * exist yet) and drops once it is stale, never a session the listing cannot see.
 * Throws `exists` (checked before the index is touched, and again atomically).
 */
export async function insertRecord(ctx: StoreContext, record: NewRecord): Promise<void> {
  const { header } = record;
  const id = header.id;
  const k = ctx.keys;
  if (await sessionExists(ctx, id)) throw errors.exists(id);
  const indexKeys = [k.order, k.pending];
  if (header.parentId !== undefined) indexKeys.push(k.children(header.parentId));
  const score = header.updatedAt.getTime();
  await call(ctx, SCRIPTS.indexRegister, indexKeys, [score, id, Date.now()], 'indexing a session');
  const created = await writeOnce(
    ctx,
    SCRIPTS.create,
    id,
    k.sessionKeyList(id),
    [
      encodeHeader(header),
      JSON.stringify(record.lineage),
      header.parentId ?? '',
      record.token,
      ctx.ttlMs,
      record.searchText,
      record.messages.length,
      ...record.messages,
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

/** One conditional write of an existing session. */
export interface RecordWrite {
  id: string;
  /** The token of the write call (`writeToken()`): the same for all its attempts. */
  token: string;
  /** The life and write version of the state the new header was computed from. */
  expected: Pick<StoredState, 'life' | 'version'>;
  header: SessionHeader;
  lineage: HistoryLineage;
  /** `append`: add `messages`; `replace`: the history becomes `messages`; `none`: header only. */
  mode: 'append' | 'replace' | 'none';
  messages: readonly string[];
  /** Appended to (`append`) or replacing (`replace`) the search text. */
  searchText: string;
  /** The message count after the write. */
  messageCount: number;
}

/** What a conditional write found. */
export type WriteOutcome =
  | { kind: 'written'; version: number }
  | { kind: 'missing' }
  | { kind: 'moved'; current: StoredState };

/**
 * Writes `w` if the stored life and write version are still `w.expected` (one script on
 * the session's slot, with the listing order inside it on standalone Redis), then, on a
 * Cluster, moves the order entry forward in a second step. Returns `moved` with the
 * current state when another write came first. A write whose token the ledger already
 * holds (an earlier attempt of the same call landed) is `written` without writing again.
 */
export async function writeRecord(ctx: StoreContext, w: RecordWrite): Promise<WriteOutcome> {
  const keys = ctx.keys.sessionKeyList(w.id);
  if (!ctx.cluster) keys.push(ctx.keys.order);
  const score = w.header.updatedAt.getTime();
  const reply = await writeOnce<unknown[]>(
    ctx,
    SCRIPTS.write,
    w.id,
    keys,
    [
      w.token,
      w.expected.life,
      w.expected.version,
      encodeHeader(w.header),
      w.header.revision,
      JSON.stringify(w.lineage),
      w.mode,
      ctx.ttlMs,
      w.searchText,
      w.header.parentId ?? '',
      w.messageCount,
      score,
      w.id,
      ...w.messages,
    ],
    w.token,
    `writing session "${w.id}"`,
  );
  if (typeof reply !== 'string') {
    if (Number(reply[0]) === 0) return { kind: 'missing' };
    return { kind: 'moved', current: stateOf(w.id, reply.slice(1)) };
  }
  if (ctx.cluster) await ctx.orderWrites.set(w.id, score);
  const [version] = outcomeNumbers(reply);
  if (!reply.startsWith('w') || !Number.isSafeInteger(version)) {
    throw errors.corrupt(w.id, `unexpected outcome of a write (${reply.slice(0, 40)})`);
  }
  return { kind: 'written', version: version as number };
}
