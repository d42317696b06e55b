// The records a thread session's history holds, one per saver write: a checkpoint record
// per `put` (the checkpoint without its channel values, its metadata and the values of the
// channels it changed) and a writes record per `putWrites`. Every record carries the
// thread's head as it was after that write, so one read of the last record tells where
// the latest checkpoint, its channel values and its pending writes are.
//
// Format 2 (`lg: 2`) adds, beside format 1's fields: `pre` on a checkpoint record (writes
// to it stored before it, which LangGraph does when it saves a task's writes before the
// step's checkpoint) and `w` in a delta (the new items are those of pending writes already
// stored). Format 3 (`lg: 3`, format.ts) stores the same records with the fields the
// rest of a record tells left out, and a delta may have no base (`n` 0: its items are all
// pending writes and `add`). Format 1 and 2 records are read as before; a saver of an
// earlier format refuses records of a later one (it cannot rebuild their values) instead
// of returning wrong ones.
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { MAX_JSON_DEPTH } from '@sessionkit/core';

/** A value as the serializer made it: JSON kept as JSON, anything else as base64. */
export type Stored = { j: unknown } | { s: string } | { t: string; x: string };

/**
 * A JSON array channel value stored as a change to an earlier one: the first `n` items of
 * the value at position `base` (same channel), then the items of the writes `w`, then
 * `add`. `n` 0 (format 3) has no base (`base` -1): the chain starts here. `s` is the first
 * position the chain reads (its full value's, or its first write's), so a reader fetches
 * `s … here` in a few windows.
 */
export interface Delta {
  d: {
    base: number;
    n: number;
    s: number;
    /** Writes whose array values are the first new items, in order (format 2). */
    w?: WriteRef[];
    add: unknown[];
  };
}

/**
 * A pending write whose array value a delta's new items begin with: the position of the
 * writes record, the index in its `w`, and, when the reducer gave some items an id after
 * the write was stored, each item's id (null: unchanged). The items are stored once.
 */
export type WriteRef =
  | [position: number, index: number]
  | [position: number, index: number, ids: (string | null)[]];

/** A channel value in a checkpoint record. */
export type Blob = Stored | Delta;

/** A channel's version and the position of the record holding its value. */
export type Ref = [version: number | string, position: number];

/** Where everything the latest checkpoint needs is (positions in the history). */
export interface Head {
  /** The history's generation: bumped when retention rewrites it (positions move). */
  g: number;
  /** The latest checkpoint's id (the greatest id), or null before the first put. */
  cp: string | null;
  /** The position of its record. */
  at: number;
  /** Whether checkpoint ids have only grown in history order (binary search is valid). */
  sorted: boolean;
  /** The latest checkpoint's channel refs. */
  lr: Record<string, Ref>;
  /** Positions of the writes records put while the latest checkpoint was latest. */
  w: number[];
  /** Writes records put to a checkpoint that was not the latest, by checkpoint id. */
  late: Record<string, number[]>;
  /** The newest stored value of each channel. */
  heads: Record<string, Ref>;
}

interface RecordBase {
  /** The record format: 1 and 2 (earlier releases; 2 adds `pre`, delta `w`) or 3 (format.ts). */
  lg: 1 | 2 | 3;
  g: number;
  /** The record's own position in the history. */
  p: number;
  /** The latest checkpoint id once this record was written ('' before any). */
  key: string;
  h: Head;
}

/** One `put`. */
export interface CheckpointRecord extends RecordBase {
  k: 'c';
  id: string;
  parent?: string;
  /** The checkpoint without `channel_values`. */
  cp: Stored;
  md: Stored;
  /** Values of the channels this put changed. */
  b: Record<string, Blob>;
  /** For each channel of the checkpoint with a stored value: its version and where it is. */
  r: Record<string, Ref>;
  /** Positions of writes records to this checkpoint stored before it (format 2). */
  pre?: number[];
}

/** One `putWrites`: [channel, idx, value] in the order given. */
export interface WritesRecord extends RecordBase {
  k: 'w';
  to: string;
  task: string;
  path: string;
  w: [string, number, Stored][];
}

export type ThreadRecord = CheckpointRecord | WritesRecord;

export const EMPTY_HEAD: Head = {
  g: 0,
  cp: null,
  at: -1,
  sorted: true,
  lr: {},
  w: [],
  late: {},
  heads: {},
};

/** The record's shape is one this saver wrote (anything else is not a saver session). */
export function isThreadRecord(value: unknown): value is ThreadRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Partial<ThreadRecord>;
  return (
    (r.lg === 1 || r.lg === 2 || r.lg === 3) &&
    (r.k === 'c' || r.k === 'w') &&
    typeof r.p === 'number'
  );
}

/** Serializes `value` with the saver's serializer into what a record stores. */
export async function storeValue(serde: SerializerProtocol, value: unknown): Promise<Stored> {
  const [type, bytes] = await serde.dumpsTyped(value);
  if (type === 'json') {
    const text = typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes);
    const parsed: unknown = JSON.parse(text);
    // Stored as JSON so the record is not JSON-in-a-string (half the bytes, readable);
    // values nested deeper than a store accepts are kept as their text.
    return withinDepth(parsed, MAX_JSON_DEPTH - 16) ? { j: parsed } : { s: text };
  }
  return { t: type, x: Buffer.from(bytes).toString('base64') };
}

/** Reads back what `storeValue` stored. */
export async function loadValue(serde: SerializerProtocol, stored: Stored): Promise<unknown> {
  if ('j' in stored) return serde.loadsTyped('json', JSON.stringify(stored.j));
  if ('s' in stored) return serde.loadsTyped('json', stored.s);
  return serde.loadsTyped(stored.t, new Uint8Array(Buffer.from(stored.x, 'base64')));
}

/** Whether `value` nests at most `max` levels (iterative: no stack to overflow). */
function withinDepth(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return false;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return true;
}

/**
 * The head after putting checkpoint `id` at position `p` with refs `r`, and `pre`: the
 * positions of the writes to `id` stored before it, which the new record keeps (they
 * leave the head's `late`, so the head does not grow with every step of a graph whose
 * writes land before their checkpoint).
 */
export function headAfterPut(
  head: Head,
  id: string,
  p: number,
  r: Record<string, Ref>,
  heads: Record<string, Ref>,
): { head: Head; pre: number[] } {
  const sorted = head.sorted && (head.cp === null || id > head.cp);
  if (head.cp !== null && id < head.cp) return { head: { ...head, sorted, heads }, pre: [] };
  const { [id]: early = [], ...late } = head.late;
  // The same id put again: the writes the earlier record had are this one's too.
  const pre = id === head.cp ? [...early, ...head.w] : [...early];
  return { head: { g: head.g, cp: id, at: p, sorted, lr: r, w: [], late, heads }, pre };
}

/**
 * The refs of a checkpoint put at position `p`: each channel of `versions` that the put
 * changed is stored at `p`; any other is found at its parent checkpoint's ref of the same
 * version first (a fork may share version numbers with its sibling), else at the newest
 * value of the channel if its version matches; a channel found in neither has no value.
 */
export function checkpointRefs(
  versions: Record<string, number | string>,
  changed: readonly string[],
  p: number,
  parentRefs: Record<string, Ref> | undefined,
  heads: Record<string, Ref>,
): Record<string, Ref> {
  const r: Record<string, Ref> = {};
  for (const [channel, version] of Object.entries(versions)) {
    if (changed.includes(channel)) {
      r[channel] = [version, p];
      continue;
    }
    const ref = parentRefs?.[channel];
    const newest = heads[channel];
    if (ref !== undefined && ref[0] === version) r[channel] = ref;
    else if (newest !== undefined && newest[0] === version) r[channel] = newest;
  }
  return r;
}

/** The record of a checkpoint put at position `p` over `head` (whose head it carries). */
export function checkpointRecord(
  head: Head,
  put: {
    id: string;
    parent: string | undefined;
    p: number;
    cp: Stored;
    md: Stored;
    b: Record<string, Blob>;
    r: Record<string, Ref>;
    heads: Record<string, Ref>;
  },
): CheckpointRecord {
  const { head: h, pre } = headAfterPut(head, put.id, put.p, put.r, put.heads);
  return {
    lg: 3,
    g: head.g,
    p: put.p,
    key: h.cp ?? '',
    h,
    k: 'c',
    id: put.id,
    ...(put.parent === undefined ? {} : { parent: put.parent }),
    cp: put.cp,
    md: put.md,
    b: put.b,
    r: put.r,
    ...(pre.length === 0 ? {} : { pre }),
  };
}
