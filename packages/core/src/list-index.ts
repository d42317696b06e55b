// The listing index of in-memory adapters (memory, file): summaries kept ordered the way
// `Store.list` orders them, once as a whole and once per folder, status and parent, each
// split into archived and not archived, so a page costs O(log n + page) instead of a sort
// of every session. `query` is matched on the candidates of the best partition, in order,
// until the page is full.
import { compareIds, compareListOrder, type ListableEntry, matchesListFilters } from './session.js';

/**
 * Listing order (newest first, then id desc), written out for the index's hot loops:
 * negative when `a` comes first.
 */
function listOrder(a: ListableEntry, b: ListableEntry): number {
  const ta = a.updatedAt.getTime();
  const tb = b.updatedAt.getTime();
  if (ta !== tb) return ta > tb ? -1 : 1;
  return a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
}

import type { NormalizedListOptions } from './input/list-input.js';

/** Entries per chunk of an ordered run before it is split in two. */
const CHUNK_MAX = 512;

/** A position in an ordered run: chunk and index in it. */
type Position = { chunk: number; index: number };

/**
 * Entries in listing order (`updatedAt` desc, then `id` desc), as chunks of sorted arrays:
 * a binary search finds a position, an insert or a removal moves at most one chunk.
 */
class OrderedRun<E extends ListableEntry> {
  chunks: E[][] = [];
  size = 0;

  /** The first position whose entry satisfies `pred` (false before, true after), or the end. */
  firstWhere(pred: (e: E) => boolean): Position {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = chunks[mid]!;
      if (pred(c[c.length - 1]!)) hi = mid;
      else lo = mid + 1;
    }
    if (lo === chunks.length) return { chunk: lo, index: 0 };
    const c = chunks[lo]!;
    let a = 0;
    let b = c.length - 1;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (pred(c[mid]!)) b = mid;
      else a = mid + 1;
    }
    return { chunk: lo, index: a };
  }

  /** The position of the first entry that does not come before `e` (or the end). */
  lowerBound(e: E): Position {
    return this.firstWhere((x) => listOrder(x, e) >= 0);
  }

  add(e: E): void {
    this.size++;
    if (this.chunks.length === 0) {
      this.chunks.push([e]);
      return;
    }
    let at = this.lowerBound(e);
    if (at.chunk === this.chunks.length) {
      const last = this.chunks.length - 1;
      at = { chunk: last, index: this.chunks[last]!.length };
    }
    const c = this.chunks[at.chunk]!;
    c.splice(at.index, 0, e);
    if (c.length > CHUNK_MAX)
      this.chunks.splice(at.chunk, 1, c.slice(0, c.length >> 1), c.slice(c.length >> 1));
  }

  /** Removes `e` (the very entry added, found by its key). */
  delete(e: E): void {
    const at = this.lowerBound(e);
    const c = this.chunks[at.chunk];
    if (c?.[at.index] !== e) return;
    c.splice(at.index, 1);
    this.size--;
    if (c.length === 0) this.chunks.splice(at.chunk, 1);
  }

  /** Entries from `from` on, forward (listing order) or backward (oldest first). */
  *walk(from: Position, backward: boolean): Generator<E> {
    const chunks = this.chunks;
    if (!backward) {
      for (let ci = from.chunk, i = from.index; ci < chunks.length; ci++, i = 0) {
        const c = chunks[ci]!;
        for (; i < c.length; i++) yield c[i]!;
      }
      return;
    }
    for (let ci = from.chunk, i = from.index; ci >= 0; ci--) {
      const c = chunks[ci];
      if (!c) continue;
      for (i = Math.min(i, c.length - 1); i >= 0; i--) yield c[i]!;
      i = Number.POSITIVE_INFINITY;
    }
  }

  /** The position just before `at` (for a backward walk), or undefined at the start. */
  before(at: Position): Position | undefined {
    if (at.index > 0) return { chunk: at.chunk, index: at.index - 1 };
    if (at.chunk === 0) return undefined;
    return { chunk: at.chunk - 1, index: this.chunks[at.chunk - 1]!.length - 1 };
  }

  /** A run of `sorted` (already in listing order), cut into half-full chunks. */
  static of<E extends ListableEntry>(sorted: E[]): OrderedRun<E> {
    const run = new OrderedRun<E>();
    for (let i = 0; i < sorted.length; i += CHUNK_MAX >> 1)
      run.chunks.push(sorted.slice(i, i + (CHUNK_MAX >> 1)));
    run.size = sorted.length;
    return run;
  }

  copy(): OrderedRun<E> {
    const out = new OrderedRun<E>();
    out.chunks = this.chunks.map((c) => c.slice());
    out.size = this.size;
    return out;
  }
}

/** Which filter a partition key stands for: the whole index, a folder, a status, a parent. */
type PartitionKind = 'a' | 'f' | 's' | 'p';

function partitionKey(kind: PartitionKind, archived: boolean, value: string): string {
  return `${kind}${archived ? 1 : 0}\u0000${value}`;
}

/** The partitions an entry belongs to (a root's parent partition has the value `""`). */
function partitionsOf(e: ListableEntry): string[] {
  const archived = e.archivedAt !== undefined;
  return [
    partitionKey('a', archived, ''),
    partitionKey('f', archived, e.folder),
    partitionKey('s', archived, e.status),
    partitionKey('p', archived, e.parentId ?? ''),
  ];
}

/**
 * The listing index: a `Map` from id to entry (every `Map` method works and keeps the
 * order up to date) that also pages the way `Store.list` must. An entry's listing fields
 * (`id`, `updatedAt`, `folder`, `status`, `parentId`, `archivedAt`) must not change while
 * it is in the index: `set` a new entry instead.
 *
 * Costs: `set`/`delete` O(log n) (plus moving one chunk of at most 512 entries);
 * `page(opts)` O(log n + offset + page) when no `query` is given and the partition it
 * walks (the smallest of the whole index and the asked folder, status or parent) holds
 * few entries the other filters reject; `query` is matched on each candidate in order
 * until the page is full (linear in the candidates searched); `children(id)` and
 * `roots()` O(log n + their number).
 */
export class ListIndex<E extends ListableEntry> extends Map<string, E> {
  #parts = new Map<string, OrderedRun<E>>();

  override set(id: string, e: E): this {
    const old = super.get(id);
    if (old) this.#unlink(old);
    super.set(id, e);
    for (const key of partitionsOf(e)) {
      let run = this.#parts.get(key);
      if (!run) {
        run = new OrderedRun<E>();
        this.#parts.set(key, run);
      }
      run.add(e);
    }
    return this;
  }

  override delete(id: string): boolean {
    const old = super.get(id);
    if (!old) return false;
    this.#unlink(old);
    return super.delete(id);
  }

  override clear(): void {
    super.clear();
    this.#parts.clear();
  }

  /**
   * An index of `entries` (by id; a later entry of an id replaces an earlier one), built
   * with one sort instead of one insert per entry and partition: O(n log n), for loading
   * a whole index at once.
   */
  static of<E extends ListableEntry>(entries: Iterable<E>): ListIndex<E> {
    const out = new ListIndex<E>();
    for (const e of entries) Map.prototype.set.call(out, e.id, e);
    const sorted = [...Map.prototype.values.call(out)] as E[];
    sorted.sort(listOrder);
    const parts = new Map<string, E[]>();
    for (const e of sorted) {
      for (const key of partitionsOf(e)) {
        const list = parts.get(key);
        if (list) list.push(e);
        else parts.set(key, [e]);
      }
    }
    for (const [key, list] of parts) out.#parts.set(key, OrderedRun.of(list));
    return out;
  }

  /** An independent copy (its own order), in O(n) without sorting. */
  copy(): ListIndex<E> {
    const out = new ListIndex<E>();
    for (const [id, e] of this) Map.prototype.set.call(out, id, e);
    for (const [key, run] of this.#parts) out.#parts.set(key, run.copy());
    return out;
  }

  /** The page `opts` asks for, in listing order (the index's own entries, not copies). */
  page(opts: NormalizedListOptions): E[] {
    const out: E[] = [];
    let skip = opts.offset;
    for (const e of this.scan(opts)) {
      if (!matchesListFilters(e, opts)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      out.push(e);
      if (out.length >= opts.limit) break;
    }
    return out;
  }

  /**
   * The candidates of `opts` in its order, after its cursor and `after` bound, from the
   * smallest partition that holds them all; the caller still applies `matchesListFilters`
   * (the other filters, `query`).
   */
  *scan(opts: Omit<NormalizedListOptions, 'limit' | 'offset'>): Generator<E> {
    const choices: [PartitionKind, string][] = [['a', '']];
    if (opts.folder !== undefined) choices.push(['f', opts.folder]);
    if (opts.status !== undefined) choices.push(['s', opts.status]);
    if (opts.parentId !== undefined) choices.push(['p', opts.parentId]);
    const archived = opts.includeArchived ? [false, true] : [false];
    const sizeOf = ([kind, value]: [PartitionKind, string]) =>
      archived.reduce((n, a) => n + (this.#parts.get(partitionKey(kind, a, value))?.size ?? 0), 0);
    let best = choices[0]!;
    for (const c of choices) if (sizeOf(c) < sizeOf(best)) best = c;
    const walks = archived.map((a) =>
      walkRun(this.#parts.get(partitionKey(best[0], a, best[1])), opts),
    );
    yield* mergeOrdered(walks, opts.oldestFirst);
  }

  /** The ids of the entries whose `parentId` is `id`, ascending in byte order. */
  children(id: string): string[] {
    const ids: string[] = [];
    for (const a of [false, true]) {
      const run = this.#parts.get(partitionKey('p', a, id));
      for (const c of run?.chunks ?? []) for (const e of c) ids.push(e.id);
    }
    return ids.sort(compareIds);
  }

  /** The entries without a parent, archived ones included, in listing order. */
  *roots(): Generator<E> {
    const walks = [false, true].map((a) =>
      walkRun(this.#parts.get(partitionKey('p', a, '')), {
        oldestFirst: false,
      }),
    );
    yield* mergeOrdered(walks, false);
  }

  #unlink(e: E): void {
    for (const key of partitionsOf(e)) {
      const run = this.#parts.get(key);
      if (!run) continue;
      run.delete(e);
      if (run.size === 0) this.#parts.delete(key);
    }
  }
}

/** The entries of `run` in the order of `opts`, after its cursor and its `after` bound. */
function* walkRun<E extends ListableEntry>(
  run: OrderedRun<E> | undefined,
  opts: Pick<NormalizedListOptions, 'oldestFirst' | 'startAfter' | 'after'>,
): Generator<E> {
  if (!run || run.size === 0) return;
  const { startAfter: cursor, after } = opts;
  // Stored newest first: entries at or past `end` have `updatedAt <= after`.
  const end =
    after === undefined ? undefined : run.firstWhere((e) => e.updatedAt.getTime() <= after);
  if (!opts.oldestFirst) {
    const from = cursor
      ? run.firstWhere((e) => compareListOrder(e, cursor, false) > 0)
      : { chunk: 0, index: 0 };
    for (const e of run.walk(from, false)) {
      if (after !== undefined && e.updatedAt.getTime() <= after) return;
      yield e;
    }
    return;
  }
  // Oldest first: backwards from the last entry before the cursor and before `end`.
  let limit = cursor
    ? run.firstWhere((e) => compareListOrder(e, cursor, false) >= 0)
    : { chunk: run.chunks.length, index: 0 };
  if (end && (end.chunk < limit.chunk || (end.chunk === limit.chunk && end.index < limit.index)))
    limit = end;
  const from = run.before(limit);
  if (from) yield* run.walk(from, true);
}

/** Ordered walks merged into one, in listing order (`oldestFirst` reverses it). */
function* mergeOrdered<E extends ListableEntry>(
  walks: Generator<E>[],
  oldestFirst: boolean,
): Generator<E> {
  if (walks.length === 1) {
    yield* walks[0]!;
    return;
  }
  const heads = walks.map((w) => w.next());
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i]!;
      if (h.done) continue;
      if (best < 0 || compareListOrder(h.value, heads[best]!.value as E, oldestFirst) < 0) best = i;
    }
    if (best < 0) return;
    yield heads[best]!.value as E;
    heads[best] = walks[best]!.next();
  }
}
