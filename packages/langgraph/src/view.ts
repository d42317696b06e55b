// A consistent view of one thread session: its head (read from the last record) and the
// records it points at, read by position through the store's message windows and cached
// for the length of one saver call. Records are only ever appended, so a position read
// later still holds what the head meant; retention rewrites the history under a new
// generation, which a read notices (the record's generation or position differ) and the
// saver call starts again.
import {
  type CheckpointPendingWrite,
  compareWritesSortKeys,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { isSessionKitError, loadMessageWindow, type Store } from '@sessionkit/core';
import { threadRecordOf } from './format.js';
import {
  type CheckpointRecord,
  EMPTY_HEAD,
  type Head,
  type Stored,
  type ThreadRecord,
} from './records.js';

/** Thrown when the history was rewritten under a view; the caller starts again. */
export class StaleView extends Error {
  constructor(sessionId: string) {
    super(`[sessionkit/langgraph] thread session "${sessionId}" was rewritten during a read`);
  }
}

/** A write as stored, before its value is deserialized. */
export interface StoredWrite {
  task: string;
  channel: string;
  idx: number;
  path: string;
  value: Stored;
}

const CHUNK = 32;
const RANGE_WINDOW = 500;

export class ThreadView {
  readonly #store: Store<unknown>;
  readonly sessionId: string;
  readonly head: Head;
  /** Records in the history this view sees. */
  readonly count: number;
  readonly revision: number;
  readonly #cache = new Map<number, ThreadRecord>();

  private constructor(
    store: Store<unknown>,
    sessionId: string,
    head: Head,
    count: number,
    revision: number,
  ) {
    this.#store = store;
    this.sessionId = sessionId;
    this.head = head;
    this.count = count;
    this.revision = revision;
  }

  /** The view of the session now (one window read), or undefined when it does not exist. */
  static async open(store: Store<unknown>, sessionId: string): Promise<ThreadView | undefined> {
    let window: Awaited<ReturnType<typeof loadMessageWindow<unknown>>>;
    try {
      window = await loadMessageWindow(store, sessionId, { last: 1 });
    } catch (e) {
      if (isSessionKitError(e, 'not_found')) return undefined;
      throw e;
    }
    const last = window.messages[0];
    const head = last === undefined ? EMPTY_HEAD : headOf(sessionId, last);
    const view = new ThreadView(store, sessionId, head, window.messageCount, window.revision);
    if (last !== undefined) view.#remember(window.messageCount - 1, last);
    return view;
  }

  /** The record at `position`. Throws `StaleView` when the history was rewritten. */
  async get(position: number): Promise<ThreadRecord> {
    const cached = this.#cache.get(position);
    if (cached !== undefined) return cached;
    await this.#fetch(position, 1);
    return this.#cache.get(position)!;
  }

  /** Reads every position not cached yet, nearby ones in one window each. */
  async prefetch(positions: Iterable<number>): Promise<void> {
    const wanted = [...new Set(positions)]
      .filter((p) => !this.#cache.has(p) && p >= 0 && p < this.count)
      .sort((a, b) => a - b);
    const runs: [number, number][] = [];
    for (const p of wanted) {
      const run = runs.at(-1);
      if (run !== undefined && p - (run[0] + run[1]) <= 4) run[1] = p - run[0] + 1;
      else runs.push([p, 1]);
    }
    await Promise.all(runs.map(([offset, limit]) => this.#fetch(offset, limit)));
  }

  /** Reads every position from `from` to `to` (excluded) not cached yet, in large windows. */
  async prefetchRange(from: number, to: number): Promise<void> {
    const reads: Promise<void>[] = [];
    let p = Math.max(0, from);
    const end = Math.min(to, this.count);
    while (p < end) {
      if (this.#cache.has(p)) {
        p++;
        continue;
      }
      let q = p;
      while (q < end && q - p < RANGE_WINDOW && !this.#cache.has(q)) q++;
      reads.push(this.#fetch(p, q - p));
      p = q;
    }
    await Promise.all(reads);
  }

  /** The checkpoint record with this id (the last one put, if it was put twice). */
  async findCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    if (this.head.cp === null) return undefined;
    if (id === this.head.cp) return (await this.get(this.head.at)) as CheckpointRecord;
    if (!this.head.sorted) {
      const all = await this.all();
      return all.findLast((r): r is CheckpointRecord => r.k === 'c' && r.id === id);
    }
    const at = await this.lowerBound(id);
    if (at >= this.count) return undefined;
    const record = await this.get(at);
    return record.k === 'c' && record.id === id ? record : undefined;
  }

  /**
   * With sorted ids: the first position whose record's key is at least `id` (binary
   * search, one small read per step).
   */
  async lowerBound(id: string): Promise<number> {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((await this.get(mid)).key < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Every record (one read of the whole history: only for unsorted histories). */
  async all(): Promise<ThreadRecord[]> {
    if (this.#cache.size < this.count) await this.#fetch(0, this.count);
    return Array.from({ length: this.count }, (_, p) => this.#cache.get(p)!);
  }

  /**
   * The checkpoint records newest first (greatest id first), only those with an id below
   * `before` when given. Reads backwards in windows of a few dozen records, so taking
   * the first `n` reads about what those `n` need.
   */
  async *descending(before?: string): AsyncGenerator<CheckpointRecord> {
    if (this.head.cp === null) return;
    if (!this.head.sorted) {
      const latest = new Map<string, CheckpointRecord>();
      for (const r of await this.all()) if (r.k === 'c') latest.set(r.id, r);
      const ids = [...latest.keys()].filter((id) => before === undefined || id < before);
      ids.sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
      for (const id of ids) yield latest.get(id)!;
      return;
    }
    let position = before === undefined ? this.count - 1 : (await this.lowerBound(before)) - 1;
    while (position >= 0) {
      const from = Math.max(0, position - CHUNK + 1);
      await this.prefetch(range(from, position + 1));
      for (; position >= from; position--) {
        const record = await this.get(position);
        if (record.k === 'c') yield record;
      }
    }
  }

  /** Positions of the writes records put to checkpoint `record`, ascending. */
  async writePositions(record: CheckpointRecord): Promise<number[]> {
    const positions: number[] = [...(this.head.late[record.id] ?? []), ...(record.pre ?? [])];
    if (this.head.cp === record.id && this.head.at === record.p) positions.push(...this.head.w);
    else if (this.head.sorted) positions.push(...(await this.#writesAfter(record)));
    else {
      for (const r of await this.all()) if (r.k === 'w' && r.to === record.id) positions.push(r.p);
    }
    await this.prefetch(positions);
    return [...new Set(positions)].sort((a, b) => a - b);
  }

  /** The writes stored for checkpoint `record`, in `writesSortKey` order, deduplicated. */
  async writesOf(record: CheckpointRecord): Promise<StoredWrite[]> {
    const records = await this.writePositions(record);
    const byKey = new Map<string, StoredWrite>();
    for (const p of records) {
      const r = await this.get(p);
      if (r.k !== 'w' || r.to !== record.id) continue;
      for (const [channel, idx, value] of r.w) {
        const key = `${r.task}\u0000${idx}`;
        // As LangGraph's savers do: a regular write (idx >= 0) is kept as first stored,
        // a special one (error, interrupt, resume …) is replaced by the latest.
        if (idx >= 0 && byKey.has(key)) continue;
        byKey.set(key, { task: r.task, channel, idx, path: r.path, value });
      }
    }
    return [...byKey.values()].sort((a, b) =>
      compareWritesSortKeys(
        writesSortKey(a.path, a.task, a.idx),
        writesSortKey(b.path, b.task, b.idx),
      ),
    );
  }

  /** Writes records stored right after `record` while it was the latest checkpoint. */
  async #writesAfter(record: CheckpointRecord): Promise<number[]> {
    const found: number[] = [];
    for (let p = record.p + 1; p < this.count; p++) {
      if (!this.#cache.has(p)) await this.prefetch(range(p, Math.min(this.count, p + 16)));
      const r = await this.get(p);
      if (r.key !== record.id) break;
      if (r.k === 'w' && r.to === record.id) found.push(p);
    }
    return found;
  }

  async #fetch(offset: number, limit: number): Promise<void> {
    const window = await loadMessageWindow(this.#store, this.sessionId, { offset, limit });
    if (window.messages.length !== limit) throw new StaleView(this.sessionId);
    window.messages.forEach((m, i) => {
      this.#remember(offset + i, m);
    });
  }

  #remember(position: number, value: unknown): void {
    const record = threadRecordOf(value);
    if (record === undefined || record.p !== position || record.g !== this.head.g)
      throw new StaleView(this.sessionId);
    this.#cache.set(position, record);
  }
}

function headOf(sessionId: string, value: unknown): Head {
  const record = threadRecordOf(value);
  if (record === undefined) throw new StaleView(sessionId);
  return record.h;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}

/** Pending writes as LangGraph returns them. */
export type PendingWrites = CheckpointPendingWrite[];
