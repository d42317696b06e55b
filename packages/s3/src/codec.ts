// The JSON records the store writes (versions, heads, index entries) and how
// they are read back: every read is checked, and a record that does not check out is
// `corrupt`.
import type { CommitResult } from '@sessionkit/core';
import type { SessionHeader, SessionState } from '@sessionkit/core/adapter';
import { OperationLog, readLineage, storedHeaderProblem } from '@sessionkit/core/adapter';
import { errors } from './errors.js';

/** The format every record carries; readers refuse a newer one. */
export const FORMAT = 1;

/** A header as stored: dates as epoch milliseconds. */
export type JsonHeader = Omit<SessionHeader, 'createdAt' | 'updatedAt' | 'archivedAt'> & {
  createdAt: number;
  updatedAt: number;
  archivedAt?: number | undefined;
};

/**
 * Where a state's messages are: the base (the first `base.count` messages of the version
 * object `base.n` itself, or of the folded snapshot of `base.n` when `folded`), then, for
 * each later version in `parts`, the first messages it appended, up to `end`. An object
 * holds more messages than its chain takes only after a truncation dropped the rest.
 */
export interface Chain {
  base: { n: number; folded: boolean; count: number };
  parts: Array<{ n: number; end: number }>;
}

/** A session as of one version: the kit's `SessionState`, and where its messages are. */
export interface State extends SessionState {
  chain: Chain;
}

/** A version object: the state after it, and the messages it wrote (if any). */
export interface VersionRecord {
  n: number;
  state: State;
  tombstone: boolean;
  /** Every message (a base version). */
  messages?: unknown[] | undefined;
  /** The messages appended (a part). */
  append?: unknown[] | undefined;
  /** The commit's operation id, recorded in this version (the write's atomic step). */
  operationId?: string | undefined;
}

/**
 * The head: the generation and the newest version the last writer knew of, with the
 * operation ids recorded up to that version (those of the versions past it are in them).
 */
export interface HeadRecord {
  gen: string;
  n: number;
  state: State;
  tombstone: boolean;
  operations: OperationLog;
}

/** One index entry: what a summary needs, and where the session's search text is. */
export interface IndexEntry {
  header: SessionHeader;
  messageCount: number;
  gen: string;
  n: number;
  chain: Chain;
}

export function headerToJson(h: SessionHeader): JsonHeader {
  const out: JsonHeader = {
    ...h,
    createdAt: h.createdAt.getTime(),
    updatedAt: h.updatedAt.getTime(),
    archivedAt: h.archivedAt?.getTime(),
  };
  if (out.archivedAt === undefined) delete out.archivedAt;
  return out;
}

/**
 * A stored header (dates as epoch milliseconds), checked by the kit's one stored-header
 * rule. Throws `Error(reason)`.
 */
export function headerFromJson(raw: unknown, id: string): SessionHeader {
  if (typeof raw !== 'object' || raw === null) throw new Error('header is not an object');
  const j = raw as Record<string, unknown>;
  if (j.id !== id) throw new Error(`header id ${JSON.stringify(j.id)} does not match its key`);
  for (const k of ['createdAt', 'updatedAt', 'archivedAt']) {
    if (j[k] !== undefined && typeof j[k] !== 'number')
      throw new Error(`header.${k} is not a time`);
  }
  const header: Record<string, unknown> = { ...j };
  for (const k of ['createdAt', 'updatedAt', 'archivedAt']) {
    if (typeof j[k] === 'number') header[k] = new Date(j[k]);
  }
  const problem = storedHeaderProblem(id, header);
  if (problem !== undefined) throw new Error(`invalid header: ${problem}`);
  return header as unknown as SessionHeader;
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function chainFromJson(raw: unknown): Chain {
  const c = raw as Partial<Chain> | null;
  const b = c?.base;
  if (!b || !isCount(b.n) || !isCount(b.count) || typeof b.folded !== 'boolean') {
    throw new Error('chain base is malformed');
  }
  if (!Array.isArray(c.parts)) throw new Error('chain parts are malformed');
  let end = b.count;
  for (const p of c.parts as Array<{ n?: unknown; end?: unknown }>) {
    if (!isCount(p?.n) || !isCount(p.end) || p.end < end)
      throw new Error('chain part is malformed');
    end = p.end;
  }
  return { base: { n: b.n, folded: b.folded, count: b.count }, parts: c.parts as Chain['parts'] };
}

export function stateToJson(s: State): unknown {
  return {
    header: headerToJson(s.header),
    messageCount: s.messageCount,
    lineage: s.lineage,
    chain: s.chain,
  };
}

/** A stored state, checked. Throws `Error(reason)`. */
export function stateFromJson(raw: unknown, id: string): State {
  if (typeof raw !== 'object' || raw === null) throw new Error('state is missing');
  const s = raw as Record<string, unknown>;
  const header = headerFromJson(s.header, id);
  if (!isCount(s.messageCount)) throw new Error('messageCount is not a count');
  const chain = chainFromJson(s.chain);
  const last = chain.parts[chain.parts.length - 1]?.end ?? chain.base.count;
  if (last !== s.messageCount) throw new Error('chain does not end at messageCount');
  return { header, messageCount: s.messageCount, lineage: readLineage(s.lineage), chain };
}

/** Parses JSON text, or throws `Error(reason)`. */
export function parseJson(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not JSON`);
  }
  if (typeof value !== 'object' || value === null) throw new Error(`${what} is not an object`);
  const v = value as Record<string, unknown>;
  if (typeof v.format !== 'number' || v.format > FORMAT) {
    throw new Error(`${what} has an unknown format ${JSON.stringify(v.format)}`);
  }
  return v;
}

export function versionToText(v: VersionRecord): string {
  return JSON.stringify({
    format: FORMAT,
    n: v.n,
    state: stateToJson(v.state),
    ...(v.tombstone ? { tombstone: true } : {}),
    ...(v.messages !== undefined ? { messages: v.messages } : {}),
    ...(v.append !== undefined ? { append: v.append } : {}),
    ...(v.operationId !== undefined ? { operationId: v.operationId } : {}),
  });
}

/** A version object read back. Throws `corrupt`. */
export function versionFromText(text: string, id: string, n: number): VersionRecord {
  try {
    const v = parseJson(text, `version ${n}`);
    if (v.n !== n) throw new Error(`version ${n} says it is ${JSON.stringify(v.n)}`);
    const state = stateFromJson(v.state, id);
    if (v.messages !== undefined && !Array.isArray(v.messages))
      throw new Error('messages is not an array');
    if (v.append !== undefined && !Array.isArray(v.append))
      throw new Error('append is not an array');
    if (v.operationId !== undefined && typeof v.operationId !== 'string')
      throw new Error('operationId is not a string');
    return {
      n,
      state,
      tombstone: v.tombstone === true,
      messages: v.messages as unknown[] | undefined,
      append: v.append as unknown[] | undefined,
      operationId: v.operationId as string | undefined,
    };
  } catch (e) {
    throw errors.corrupt(id, (e as Error).message);
  }
}

export function headToText(h: HeadRecord): string {
  return JSON.stringify({
    format: FORMAT,
    gen: h.gen,
    n: h.n,
    state: stateToJson(h.state),
    ...(h.tombstone ? { tombstone: true } : {}),
    ...(h.operations.size > 0 ? { operations: operationsToJson(h.operations) } : {}),
  });
}

/** The result a version's commit resolved with: its state's revision, count and time. */
export function resultOf(state: State): CommitResult {
  return {
    revision: state.header.revision,
    messageCount: state.messageCount,
    updatedAt: new Date(state.header.updatedAt.getTime()),
  };
}

/**
 * `log` with `operationId` recorded as the commit that wrote `state` (a new log; the
 * oldest id forgotten past `MAX_REMEMBERED_OPERATIONS`). `log` itself when there is no id.
 */
export function withOperation(
  log: OperationLog,
  operationId: string | undefined,
  state: State,
): OperationLog {
  if (operationId === undefined) return log;
  const next = new OperationLog();
  for (const [id, result] of log.entries()) next.record(id, result);
  next.record(operationId, resultOf(state));
  return next;
}

/** A log as stored: `[id, revision, messageCount, updatedAt ms]`, oldest first. */
function operationsToJson(log: OperationLog): unknown[] {
  return log.entries().map(([id, r]) => [id, r.revision, r.messageCount, r.updatedAt.getTime()]);
}

/** A stored log read back (absent: none recorded, as heads of older releases). */
function operationsFromJson(raw: unknown): OperationLog {
  const log = new OperationLog();
  if (raw === undefined) return log;
  if (!Array.isArray(raw)) throw new Error('head operations are malformed');
  for (const item of raw) {
    const [id, revision, messageCount, at] = Array.isArray(item) ? item : [];
    if (typeof id !== 'string' || !isCount(revision) || !isCount(messageCount) || !isCount(at)) {
      throw new Error('a head operation is malformed');
    }
    log.record(id, { revision, messageCount, updatedAt: new Date(at) });
  }
  return log;
}

/** A head read back. Throws `Error(reason)`. */
export function headFromText(text: string, id: string): HeadRecord {
  const h = parseJson(text, 'head');
  if (typeof h.gen !== 'string' || !/^[a-z0-9]{1,40}$/.test(h.gen))
    throw new Error('head generation is malformed');
  if (!Number.isSafeInteger(h.n) || (h.n as number) < 1)
    throw new Error('head version is malformed');
  return {
    gen: h.gen,
    n: h.n as number,
    state: stateFromJson(h.state, id),
    tombstone: h.tombstone === true,
    operations: operationsFromJson(h.operations),
  };
}

export function entryToJson(e: IndexEntry): unknown {
  return {
    header: headerToJson(e.header),
    messageCount: e.messageCount,
    gen: e.gen,
    n: e.n,
    chain: e.chain,
  };
}

/** An index entry read back, or undefined when it does not check out (repair rebuilds it). */
export function entryFromJson(raw: unknown, id: string): IndexEntry | undefined {
  try {
    const e = raw as Record<string, unknown>;
    if (typeof e.gen !== 'string' || !Number.isSafeInteger(e.n)) return undefined;
    const state = stateFromJson({ ...e, lineage: undefined }, id);
    return {
      header: state.header,
      messageCount: state.messageCount,
      gen: e.gen,
      n: e.n as number,
      chain: state.chain,
    };
  } catch {
    return undefined;
  }
}

/** The index entry of a session as of a version. */
export function entryOf(gen: string, n: number, state: State): IndexEntry {
  return { header: state.header, messageCount: state.messageCount, gen, n, chain: state.chain };
}
