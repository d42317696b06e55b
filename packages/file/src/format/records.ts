// What the frames hold: the JSON form of a session header, and the metas of snapshot,
// offset-table, commit-log, event and index records.

import type { JsonValue, Session, SessionSummary } from '@sessionkit/core';
import { type HistoryLineage, storedHeaderProblem } from '@sessionkit/core/adapter';

/** A session header as stored: every field but messages and children; dates in epoch ms. */
export interface HeaderJson {
  id: string;
  title: string;
  folder: string;
  parentId?: string;
  createdAt: number;
  updatedAt: number;
  model: string;
  provider: string;
  tokenCount: number;
  costUsd: number;
  turnCount: number;
  metadata: Record<string, string>;
  status: string;
  branchedAtTurn?: number;
  revision: number;
  archivedAt?: number;
  mode?: string;
  state?: JsonValue;
}

/**
 * Meta of a snapshot's first frame; its body is the JSON array of messages. Format 3
 * snapshots have a second frame, the message-offset table (`OffsetsMeta`).
 */
export interface SnapshotMeta {
  v: number;
  kind: 'snapshot';
  header: HeaderJson;
  messageCount: number;
  /** Merge lineage (format 3); absent in older snapshots (`readLineage(undefined)`). */
  lineage?: HistoryLineage;
  /**
   * Format 6: the session's last `MAX_REMEMBERED_OPERATIONS` operation ids with the result
   * each resolves with, oldest first; absent when there are none. The log's records after
   * the snapshot carry the newer ones (`LogMeta.op`).
   */
  ops?: StoredOperation[];
}

/** An operation id as a snapshot keeps it, with its commit's result (epoch ms). */
export type StoredOperation = [
  id: string,
  revision: number,
  messageCount: number,
  updatedAt: number,
];

/**
 * Meta of a format-3 snapshot's second frame. Its body is the binary offset table:
 * `count + 1` entries of 8 bytes (u32 LE each): entry `i < count` = the byte offset of
 * message `i`'s JSON inside the first frame's body and the CRC-32 of that JSON; entry
 * `count` = the body's length and 0. Message `i` spans `[off(i), off(i + 1) − 1)` (the
 * byte at `off(i + 1) − 1` is the `,` or `]` after it). See `format/message-offsets.ts`.
 */
export interface OffsetsMeta {
  v: number;
  kind: 'offsets';
  count: number;
}

/**
 * Meta of a commit-log record; its body is the JSON array of appended messages (empty
 * when none). `header` is the complete header after the record; `seq` counts records
 * since the snapshot (1, 2, …). `kind: 'reparent'` records change only `parentId` (a
 * deleted parent's children are promoted) and keep the revision.
 */
export interface LogMeta {
  v: number;
  kind: 'commit' | 'reparent';
  seq: number;
  header: HeaderJson;
  messageCount: number;
  appended: number;
  /** Merge lineage after the record (format 3); absent in older records. */
  lineage?: HistoryLineage;
  /** UTF-8 byte length of each appended message's JSON (format 3), for folds. */
  sizes?: number[];
  /**
   * Format 5, a commit's `truncate`: the record first keeps only the first `truncate`
   * messages of the history before it, then appends its own (`messageCount = truncate +
   * appended`). Readers of format 5 apply it; from format 6 windows take each position
   * from the newest record holding it, and folds splice the kept prefix of the bytes.
   */
  truncate?: number;
  /**
   * A commit's `operationId` (written from format 6 on): recorded in the same record as
   * the write it names (so in the same atomic step, and in the commit journal with it);
   * the record's header and `messageCount` give the result a repeat resolves with. A new
   * snapshot carries the last 1,000 in its meta (`SnapshotMeta.ops`).
   */
  op?: string;
}

/** Meta of an event record; its body is the payload JSON. */
export interface EventMeta {
  v: number;
  sequence: number;
  revision: number;
  at: number;
  type: string;
}

/** An index entry: a summary without `children` (derived), dates in epoch ms. */
export type IndexEntryJson = HeaderJson & { messageCount: number };

/** Meta of an index record (no body). */
export type IndexMeta =
  | { v: number; op: 'put'; entry: IndexEntryJson }
  | { v: number; op: 'del'; id: string }
  /**
   * The first record of every rewritten index (compaction, repair): a random id, so a
   * reader that cached a position in an older file whose inode number the new file reuses
   * sees a different first record and re-reads the file from the start.
   */
  | { v: number; op: 'gen'; id: string };

/** A session's header in its stored JSON form. */
export function headerToJson(s: Omit<Session<unknown>, 'messages' | 'children'>): HeaderJson {
  const h: HeaderJson = {
    id: s.id,
    title: s.title,
    folder: s.folder,
    createdAt: s.createdAt.getTime(),
    updatedAt: s.updatedAt.getTime(),
    model: s.model,
    provider: s.provider,
    tokenCount: s.tokenCount,
    costUsd: s.costUsd,
    turnCount: s.turnCount,
    metadata: { ...s.metadata },
    status: s.status,
    revision: s.revision,
  };
  if (s.parentId !== undefined) h.parentId = s.parentId;
  if (s.branchedAtTurn !== undefined) h.branchedAtTurn = s.branchedAtTurn;
  if (s.archivedAt !== undefined) h.archivedAt = s.archivedAt.getTime();
  if (s.mode !== undefined) h.mode = s.mode;
  if (s.state !== undefined) h.state = s.state;
  return h;
}

/** A stored header as the session fields the API returns (fresh objects). */
export function headerFromJson(h: HeaderJson): Omit<Session<never>, 'messages' | 'children'> {
  const out: Omit<Session<never>, 'messages' | 'children'> = {
    id: h.id,
    title: h.title,
    folder: h.folder,
    createdAt: new Date(h.createdAt),
    updatedAt: new Date(h.updatedAt),
    model: h.model,
    provider: h.provider,
    tokenCount: h.tokenCount,
    costUsd: h.costUsd,
    turnCount: h.turnCount,
    metadata: { ...h.metadata },
    status: h.status,
    revision: h.revision,
  };
  if (h.parentId !== undefined) out.parentId = h.parentId;
  if (h.branchedAtTurn !== undefined) out.branchedAtTurn = h.branchedAtTurn;
  if (h.archivedAt !== undefined) out.archivedAt = new Date(h.archivedAt);
  if (h.mode !== undefined) out.mode = h.mode;
  if (h.state !== undefined) out.state = structuredClone(h.state);
  return out;
}

/** A summary from an index entry and the derived children. */
export function summaryFromEntry(e: IndexEntryJson, children: string[]): SessionSummary {
  const { messageCount, ...header } = e;
  return { ...headerFromJson(header), messageCount, children };
}

/**
 * Why `h` is not a usable stored header of session `id`, or `undefined`: core's strict
 * rule (`storedHeaderProblem`: every field present and valid as `create` and `save` would
 * accept it: types, text caps, dates, counter ranges) over the header with its epoch-ms
 * dates decoded. For the header a read returns (a snapshot's, a tip's, a load's last); the records a
 * load passes over are checked by `headerShapeProblem`.
 */
export function headerProblem(h: unknown, id: string): string | undefined {
  const shape = headerShapeProblem(h, id);
  if (shape !== undefined) return shape;
  const r = h as Record<string, unknown>;
  if (r.archivedAt !== undefined && !isFiniteNumber(r.archivedAt))
    return 'header.archivedAt is not a number';
  const decoded: Record<string, unknown> = {
    ...r,
    createdAt: new Date(r.createdAt as number),
    updatedAt: new Date(r.updatedAt as number),
  };
  if (r.archivedAt !== undefined) decoded.archivedAt = new Date(r.archivedAt as number);
  return storedHeaderProblem(id, decoded);
}

/**
 * Why `h` does not even have a stored header's shape (the id, the types of the fields a
 * read relies on, a positive revision), or `undefined`. Cheap: for every record a load
 * or fold passes over.
 */
export function headerShapeProblem(h: unknown, id: string): string | undefined {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return 'header is missing';
  const r = h as Record<string, unknown>;
  if (r.id !== id) return `header id ${JSON.stringify(r.id)} does not match the folder`;
  for (const k of ['title', 'folder', 'model', 'provider', 'status'])
    if (typeof r[k] !== 'string') return `header.${k} is not a string`;
  for (const k of ['createdAt', 'updatedAt', 'tokenCount', 'costUsd', 'turnCount'])
    if (!isFiniteNumber(r[k])) return `header.${k} is not a number`;
  if (typeof r.revision !== 'number' || !Number.isSafeInteger(r.revision) || r.revision < 1)
    return 'header.revision is not a positive integer';
  if (typeof r.metadata !== 'object' || r.metadata === null) return 'header.metadata is missing';
  return undefined;
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The index entry of a session whose header is `header` and history `messageCount` long. */
export function entryOf(header: HeaderJson, messageCount: number): IndexEntryJson {
  return { ...header, messageCount };
}
