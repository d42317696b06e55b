// list(): the order sorted set, or with a `folder`/`status`/`parentId` filter the smallest
// of those values' sorted sets, gives ids in listing order; every summary is read from the
// session's own keys (never from the index), so a listed summary always equals `load`.
// An entry that disagrees with its session is healed on the way; when that happened the
// walk runs again so the page is in the sessions' true order.
import type { SessionSummary } from '@sessionkit/core';
import {
  compareListOrder,
  IN_FLIGHT_WRITE_GRACE_MS,
  isAfterCursor,
  matchesListFilters,
  type NormalizedListOptions,
  type SessionHeader,
} from '@sessionkit/core/adapter';
import type { Cluster } from 'ioredis';
import { call, command } from './calls.js';
import { childrenOf } from './children.js';
import { groupByNode } from './cluster-slots.js';
import { decodeCount, decodeHeader } from './codec.js';
import type { StoreContext } from './context.js';
import { SCRIPTS } from './lua/index.js';
import { scorePairs } from './scan.js';

/** Ids read from the order set in the first step (at least the page size); it doubles up to `MAX_CHUNK`. */
const FIRST_CHUNK = 16;
const MAX_CHUNK = 1000;
/**
 * Sessions one summary script reads on standalone Redis: a script holds the server while it
 * runs, and a search walks every search text of each session it reads.
 */
const SUMMARY_BATCH = 100;
/** Walks after which a page is returned even if healing is still going on (sorted anyway). */
const MAX_WALKS = 3;

/** A session as a listing walk found it. */
export interface ListedRow {
  header: SessionHeader;
  messageCount: number;
}

/** What a walk over the order set keeps. */
export interface WalkOptions {
  /** Listing options (filters, order, cursor); `limit`/`offset` are not applied here. */
  opts: NormalizedListOptions;
  /** Stop after this many accepted rows. */
  want: number;
}

/** The summaries `list(opts)` returns. */
export async function listSummaries(
  ctx: StoreContext,
  opts: NormalizedListOptions,
): Promise<SessionSummary[]> {
  const rows = await walkHealed(ctx, { opts, want: opts.offset + opts.limit });
  const page = rows.slice(opts.offset, opts.offset + opts.limit);
  const children = await childrenOf(
    ctx,
    page.map((r) => r.header.id),
  );
  return page.map((r) => ({
    ...r.header,
    children: children.get(r.header.id) ?? [],
    messageCount: r.messageCount,
  }));
}

/** A walk, repeated (at most `MAX_WALKS` times) while it had to heal the index. */
export async function walkHealed(ctx: StoreContext, w: WalkOptions): Promise<ListedRow[]> {
  for (let walk = 1; ; walk++) {
    const { rows, healed } = await walkOrder(ctx, w);
    if (!healed || walk >= MAX_WALKS) {
      return rows.sort((a, b) => compareListOrder(a.header, b.header, w.opts.oldestFirst));
    }
  }
}

/** The score bounds and the page state of a walk over the order set. */
interface Cursor {
  /** Inclusive bound on the side the walk starts from (`undefined`: unbounded). */
  from: number | undefined;
  /** Exclusive bound on the far side (`after` when the walk runs towards it). */
  until: number | undefined;
  /** Entries at score `from` already seen. */
  skip: number;
  /** Entries to read in the next step. */
  size: number;
}

/** The sorted index a walk reads, and which sessions belong in it. */
interface WalkedIndex {
  key: string;
  /** False for an entry its session no longer belongs to (skipped, never healed). */
  holds(header: SessionHeader): boolean;
}

/**
 * The index a listing walks: the order set without filters, else the smallest of the
 * filters' indexes (the other filters are checked on each summary read).
 */
async function chooseIndex(ctx: StoreContext, opts: NormalizedListOptions): Promise<WalkedIndex> {
  const k = ctx.keys;
  const choices: WalkedIndex[] = [];
  const { folder, status, parentId } = opts;
  if (parentId !== undefined) {
    choices.push({ key: k.parentIndex(parentId), holds: (h) => h.parentId === parentId });
  }
  if (folder !== undefined) {
    choices.push({ key: k.folderIndex(folder), holds: (h) => h.folder === folder });
  }
  if (status !== undefined) {
    choices.push({ key: k.statusIndex(status), holds: (h) => h.status === status });
  }
  if (choices.length === 0) return { key: k.order, holds: () => true };
  if (choices.length === 1) return choices[0] as WalkedIndex;
  const sizes = await call<number[]>(
    ctx,
    SCRIPTS.indexSizes,
    choices.map((c) => c.key),
    [],
    'listing sessions',
  );
  let best = 0;
  for (let i = 1; i < choices.length; i++) {
    if (Number(sizes[i]) < Number(sizes[best])) best = i;
  }
  return choices[best] as WalkedIndex;
}

async function walkOrder(
  ctx: StoreContext,
  { opts, want }: WalkOptions,
): Promise<{ rows: ListedRow[]; healed: boolean }> {
  // By id: a session committed during the walk can be met again further on (its entry moved
  // ahead of the cursor); its newest state counts once.
  const rows = new Map<string, ListedRow>();
  let healed = false;
  const index = await chooseIndex(ctx, opts);
  const cursor = initialCursor(opts, want);
  while (rows.size < want) {
    const chunk = await readChunk(ctx, index.key, cursor, opts.oldestFirst);
    if (chunk.length === 0) break;
    advance(cursor, chunk);
    const found = await readRows(ctx, chunk, opts.query);
    for (const [i, row] of found.entries()) {
      const entry = chunk[i] as IndexEntry;
      if (row === 'missing') {
        await dropOrphan(ctx, index.key, entry);
        continue;
      }
      if (row === 'corrupt') continue; // repair() reports it; listing never shows it
      // An entry left by a write that did not land (or not yet): the session's own index
      // has it; repair() removes this one.
      if (!index.holds(row.header)) continue;
      if (row.header.updatedAt.getTime() !== entry.score) {
        const actual = row.header.updatedAt.getTime();
        healed = (await healEntry(ctx, index.key, entry, actual)) || healed;
      }
      if (!matchesListFilters(row.entry, opts)) continue;
      if (opts.startAfter && !isAfterCursor(row.header, opts.startAfter, opts.oldestFirst))
        continue;
      const seen = rows.get(row.header.id);
      if (!seen || seen.header.revision < row.header.revision) rows.set(row.header.id, row);
    }
  }
  return { rows: [...rows.values()], healed };
}

function initialCursor(opts: NormalizedListOptions, want: number): Cursor {
  // A page without filters needs about `want` entries; filters and heals read further, in
  // growing steps, so a short page never reads a thousand summaries.
  const size = Math.min(
    MAX_CHUNK,
    Math.max(FIRST_CHUNK, Number.isFinite(want) ? want + 1 : MAX_CHUNK),
  );
  const cursor: Cursor = { from: opts.startAfter?.updatedAt, until: undefined, skip: 0, size };
  if (opts.after === undefined) return cursor;
  if (opts.oldestFirst) {
    // Walking up from `after`: start there unless the cursor is already later.
    if (cursor.from === undefined || cursor.from <= opts.after) cursor.from = opts.after + 1;
  } else {
    cursor.until = opts.after;
  }
  return cursor;
}

/** One order-set entry. */
interface IndexEntry {
  id: string;
  score: number;
}

async function readChunk(
  ctx: StoreContext,
  key: string,
  c: Cursor,
  oldestFirst: boolean,
): Promise<IndexEntry[]> {
  const from = c.from === undefined ? (oldestFirst ? '-inf' : '+inf') : String(c.from);
  const until = c.until === undefined ? (oldestFirst ? '+inf' : '-inf') : `(${c.until}`;
  const args = oldestFirst ? [from, until, 'BYSCORE'] : [from, until, 'BYSCORE', 'REV'];
  const reply = await command(ctx, 'listing sessions', () =>
    ctx.client.call('ZRANGE', key, ...args, 'LIMIT', c.skip, c.size, 'WITHSCORES'),
  );
  return scorePairs(reply).map(([id, score]) => ({ id, score }));
}

/** Moves the cursor past `chunk`: the next read starts at its last score, skipping the ties seen. */
function advance(c: Cursor, chunk: readonly IndexEntry[]): void {
  const last = (chunk[chunk.length - 1] as IndexEntry).score;
  const ties = chunk.filter((e) => e.score === last).length;
  c.skip = c.from === last ? c.skip + ties : ties;
  c.from = last;
  c.size = Math.min(MAX_CHUNK, c.size * 2);
}

type ReadRow =
  | (ListedRow & { entry: ListedRow['header'] & { searchText: string } })
  | 'missing'
  | 'corrupt';

/**
 * The summary data of each entry from the session's keys (never its messages), in the
 * chunk's order. On standalone Redis one script reads up to `SUMMARY_BATCH` sessions (a
 * page is one round trip, not one per session); on a Cluster the sessions' keys span
 * slots, so each is its own script, sent as one pipeline per node.
 */
async function readRows(
  ctx: StoreContext,
  chunk: readonly IndexEntry[],
  query: string | undefined,
): Promise<ReadRow[]> {
  ctx.stats.summaryReads += chunk.length;
  if (ctx.cluster) return readRowsByNode(ctx, chunk, query);
  const batches: IndexEntry[][] = [];
  for (let i = 0; i < chunk.length; i += SUMMARY_BATCH) {
    batches.push(chunk.slice(i, i + SUMMARY_BATCH));
  }
  const replies = await Promise.all(
    batches.map((batch) =>
      call<unknown[]>(
        ctx,
        SCRIPTS.summaries,
        batch.flatMap((e) => {
          const k = ctx.keys.session(e.id);
          return [k.meta, k.text, k.legacyText];
        }),
        [query ?? ''],
        'listing sessions',
      ),
    ),
  );
  const rows = replies.flat();
  return chunk.map((e, i) => rowOf(e, rows[i] === 0 ? null : (rows[i] as unknown[]), query));
}

/**
 * On a Cluster: the summary scripts of the entries served by one node go as one pipeline
 * (a script cannot span the sessions' slots, a pipeline can span one node's). An entry
 * whose script failed in the pipeline (a redirection, a node that does not know the script
 * yet) is read again on its own, routed and retried by the client.
 */
async function readRowsByNode(
  ctx: StoreContext,
  chunk: readonly IndexEntry[],
  query: string | undefined,
): Promise<ReadRow[]> {
  const cluster = ctx.client as Cluster;
  const groups = groupByNode(cluster, chunk, (e) => ctx.keys.session(e.id).meta);
  const rows = new Map<IndexEntry, ReadRow>();
  await Promise.all(
    [...groups].map(async ([node, group]) => {
      const replies = node === '' ? [] : await pipelineSummaries(ctx, group, query);
      await Promise.all(
        group.map(async (e, i) => {
          const reply = replies[i];
          rows.set(
            e,
            reply === undefined || reply[0] !== null
              ? await readRow(ctx, e, query)
              : rowOf(e, reply[1] as unknown[] | null, query),
          );
        }),
      );
    }),
  );
  return chunk.map((e) => rows.get(e) as ReadRow);
}

/**
 * The summary scripts of `group` (one node's sessions) as one pipeline: `[error, reply]`
 * each. A node that does not know the script yet gets it once, in a second pipeline that
 * sends its source (EVAL caches it for the next listings).
 */
async function pipelineSummaries(
  ctx: StoreContext,
  group: readonly IndexEntry[],
  query: string | undefined,
): Promise<[Error | null, unknown][]> {
  const send = (entries: readonly IndexEntry[], withSource: boolean) =>
    command(ctx, 'listing sessions', async () => {
      const pipeline = ctx.client.pipeline();
      for (const e of entries) {
        const keys = ctx.keys.sessionKeyList(e.id);
        if (withSource) pipeline.eval(SCRIPTS.summary.source, keys.length, ...keys, query ?? '');
        else pipeline.evalsha(SCRIPTS.summary.sha, keys.length, ...keys, query ?? '');
      }
      return ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
    });
  try {
    const replies = await send(group, false);
    const unknown = group.filter((_, i) => replies[i]?.[0]?.message.startsWith('NOSCRIPT'));
    if (unknown.length === 0) return replies;
    const loaded = await send(unknown, true);
    let next = 0;
    return replies.map((r) => (r[0]?.message.startsWith('NOSCRIPT') ? (loaded[next++] ?? r) : r));
  } catch {
    // The pipeline as a whole failed (its node moved or went away): each entry is read on
    // its own, which the client routes and retries.
    return [];
  }
}

/** The summary data of one entry (`readRows` on a Cluster). */
async function readRow(
  ctx: StoreContext,
  e: IndexEntry,
  query: string | undefined,
): Promise<ReadRow> {
  const reply = await call<unknown[] | null>(
    ctx,
    SCRIPTS.summary,
    ctx.keys.sessionKeyList(e.id),
    [query ?? ''],
    'listing sessions',
  );
  return rowOf(e, reply, query);
}

/** A listing row from a summary script's reply (`null`: the session does not exist). */
function rowOf(
  e: IndexEntry,
  reply: unknown[] | null | undefined,
  query: string | undefined,
): ReadRow {
  if (reply === null || reply === undefined) return 'missing';
  try {
    const header = decodeHeader(e.id, reply[0]);
    const messageCount = decodeCount(e.id, reply[1]);
    // The script matched the query against the search text; core's filter sees a text that
    // contains the query exactly when the script found it.
    const searchText = Number(reply[2]) === 1 ? (query ?? '') : '';
    return { header, messageCount, entry: { ...header, searchText } };
  } catch {
    return 'corrupt';
  }
}

/** Corrects an entry that disagrees with its session; true when it changed it. */
async function healEntry(
  ctx: StoreContext,
  key: string,
  e: IndexEntry,
  actual: number,
): Promise<boolean> {
  const changed = await call<number>(
    ctx,
    SCRIPTS.indexHeal,
    [key],
    [e.id, e.score, actual],
    'healing the listing index',
  );
  if (Number(changed) === 1) ctx.stats.indexHeals++;
  return Number(changed) === 1;
}

/** Drops the entry of a session that does not exist, unless a create is still writing it. */
async function dropOrphan(ctx: StoreContext, key: string, e: IndexEntry): Promise<void> {
  const since = await command(ctx, 'listing sessions', () =>
    ctx.client.zscore(ctx.keys.pending, e.id),
  );
  if (since !== null && Date.now() - Number(since) < IN_FLIGHT_WRITE_GRACE_MS) return;
  await call(
    ctx,
    SCRIPTS.indexDrop,
    [key, ctx.keys.pending],
    [e.id, e.score],
    'healing the listing index',
  );
}
