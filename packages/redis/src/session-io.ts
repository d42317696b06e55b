// Reads and writes of one session's keys (one slot), plus the index steps that go with
// them. Every write is one Lua script that checks the write version its header was computed
// from; core's kit computes the header.
import { randomBytes } from 'node:crypto';
import type { HistoryLineage, SessionHeader } from '@sessionkit/core/adapter';
import { decodeCount, decodeHeader, decodeLineage, encodeHeader } from './codec.js';
import type { StoreContext } from './context.js';
import { errors, wrapRedisError } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { type LuaScript, runScript } from './scripts.js';

/** A session as stored, without its messages. */
export interface StoredState {
  header: SessionHeader;
  messageCount: number;
  lineage: HistoryLineage;
  /** The write version `w`: what a conditional write checks (every write moves it). */
  version: number;
}

/** Runs a script and wraps any driver error as a sessionkit error naming `doing`. */
export async function call<T>(
  ctx: StoreContext,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  doing: string,
): Promise<T> {
  try {
    return await runScript<T>(ctx.client, script, keys, args);
  } catch (e) {
    throw wrapRedisError(e, doing);
  }
}

/** Random per process: tokens of two processes never collide. */
const PROCESS_NONCE = randomBytes(9).toString('base64');
let writeCounter = 0;

/** A token naming one write, so a command ioredis re-sends after a reconnect applies once. */
export function writeToken(): string {
  writeCounter++;
  return `${PROCESS_NONCE}${writeCounter.toString(36)}`;
}

/** The state from `[header, count, lineage, version, …]`; throws `corrupt`. */
export function stateOf(id: string, reply: readonly unknown[]): StoredState {
  const header = decodeHeader(id, reply[0]);
  const messageCount = decodeCount(id, reply[1]);
  const version = Number(reply[3]);
  if (typeof reply[3] !== 'string' || !Number.isSafeInteger(version)) {
    throw errors.corrupt(id, 'the write version is not a number');
  }
  return { header, messageCount, lineage: decodeLineage(reply[2]), version };
}

/** The stored state of `id`, or `undefined` when there is no such session. */
export async function readState(ctx: StoreContext, id: string): Promise<StoredState | undefined> {
  const reply = await call<unknown[] | null>(
    ctx,
    SCRIPTS.readState,
    ctx.keys.sessionKeyList(id),
    [],
    `reading session "${id}"`,
  );
  return reply === null ? undefined : stateOf(id, reply);
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
  const created = await call<number>(
    ctx,
    SCRIPTS.create,
    k.sessionKeyList(id),
    [
      encodeHeader(header),
      JSON.stringify(record.lineage),
      header.parentId ?? '',
      writeToken(),
      ctx.ttlMs,
      record.searchText,
      record.messages.length,
      ...record.messages,
    ],
    `creating session "${id}"`,
  );
  // Either way the create is over: a lost race leaves at most a later order score (healed
  // by the next listing) and a parent link its session does not confirm (never read).
  await call(ctx, SCRIPTS.indexUnpend, [k.pending], [id], 'indexing a session');
  if (created !== 1) throw errors.exists(id);
}

/** Whether any record (readable or not) is stored under `id`. */
export async function sessionExists(ctx: StoreContext, id: string): Promise<boolean> {
  try {
    return (await ctx.client.exists(ctx.keys.session(id).meta)) === 1;
  } catch (e) {
    throw wrapRedisError(e, `reading session "${id}"`);
  }
}

/** One conditional write of an existing session. */
export interface RecordWrite {
  id: string;
  /** The write version of the state the new header was computed from. */
  expectedVersion: number;
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
 * Writes `w` if the stored write version is still `w.expectedVersion` (one script on the
 * session's slot, with the listing order inside it on standalone Redis), then, on a
 * Cluster, moves the order entry forward in a second step. Returns `moved` with the
 * current state when another write came first.
 */
export async function writeRecord(ctx: StoreContext, w: RecordWrite): Promise<WriteOutcome> {
  const keys = ctx.keys.sessionKeyList(w.id);
  if (!ctx.cluster) keys.push(ctx.keys.order);
  const score = w.header.updatedAt.getTime();
  const reply = await call<unknown[]>(
    ctx,
    SCRIPTS.write,
    keys,
    [
      w.expectedVersion,
      writeToken(),
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
    `writing session "${w.id}"`,
  );
  const status = Number(reply[0]);
  if (status === 0) return { kind: 'missing' };
  if (status === 1) return { kind: 'moved', current: stateOf(w.id, reply.slice(1)) };
  if (ctx.cluster) await ctx.orderWrites.set(w.id, score);
  return { kind: 'written', version: w.expectedVersion + 1 };
}
