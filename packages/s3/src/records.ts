// The JSON records the store writes (versions, heads, index entries) and how they are
// read back: every read is checked, and a record that does not check out is `corrupt`.
import type { HistoryLineage, SessionHeader } from '@sessionkit/core/adapter';
import { assertSaveInput, readLineage } from '@sessionkit/core/adapter';
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
 * Where a state's messages are: the base (every message before `base.count`, in the
 * version object `base.n` itself, or in the folded snapshot of `base.n` when `folded`),
 * then the messages each later version in `parts` appended, up to its `end`.
 */
export interface Chain {
  base: { n: number; folded: boolean; count: number };
  parts: Array<{ n: number; end: number }>;
}

/** A session as of one version: everything but the message bodies. */
export interface State {
  header: SessionHeader;
  messageCount: number;
  lineage: HistoryLineage;
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
}

/** The head: the generation and the newest version the last writer knew of. */
export interface HeadRecord {
  gen: string;
  n: number;
  state: State;
  tombstone: boolean;
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

const STORED_FIELDS = ['createdAt', 'updatedAt', 'tokenCount', 'costUsd', 'turnCount', 'metadata'];

/** A stored header, checked with core's save rules. Throws `Error(reason)`. */
export function headerFromJson(raw: unknown, id: string): SessionHeader {
  if (typeof raw !== 'object' || raw === null) throw new Error('header is not an object');
  const j = raw as Record<string, unknown>;
  if (j.id !== id) throw new Error(`header id ${JSON.stringify(j.id)} does not match its key`);
  const missing = STORED_FIELDS.find((k) => j[k] === undefined);
  if (missing !== undefined) throw new Error(`header.${missing} is missing`);
  for (const k of ['createdAt', 'updatedAt', 'archivedAt']) {
    if (j[k] !== undefined && typeof j[k] !== 'number')
      throw new Error(`header.${k} is not a time`);
  }
  const header = {
    ...j,
    createdAt: new Date(j.createdAt as number),
    updatedAt: new Date(j.updatedAt as number),
  } as SessionHeader;
  if (j.archivedAt !== undefined) header.archivedAt = new Date(j.archivedAt as number);
  try {
    assertSaveInput(errors, { ...header, messages: [], children: [] });
  } catch (e) {
    throw new Error(`invalid header: ${(e as Error).message.replace(`${errors.prefix} `, '')}`);
  }
  if (!Number.isSafeInteger(header.revision) || header.revision < 1) {
    throw new Error('header.revision is not a positive integer');
  }
  return header;
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
    return {
      n,
      state,
      tombstone: v.tombstone === true,
      messages: v.messages as unknown[] | undefined,
      append: v.append as unknown[] | undefined,
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
  });
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
