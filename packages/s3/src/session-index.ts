// The listing index: a fixed number of shard objects, each a map of session id → entry,
// replaced by compare-and-swap (`If-Match`). Plus the write-intent markers that keep
// listing truthful when a writer dies between a version and its index update.
import { randomBytes } from 'node:crypto';
import { isSessionKitError } from '@sessionkit/core';
import { IN_FLIGHT_WRITE_GRACE_MS, LOST_RACE, retryLostRaces } from '@sessionkit/core/adapter';
import {
  entryFromJson,
  entryOf,
  entryToJson,
  FORMAT,
  type IndexEntry,
  parseJson,
} from './codec.js';
import { errors } from './errors.js';
import { idOfKey, PENDING_PREFIX, pendingKey, shardKey, shardOf } from './keys.js';
import type { ObjectIO } from './objects.js';
import { readCurrent } from './session-log.js';

/** A marker older than the kit's grace for a write in flight belongs to a writer that died. */
export const STALE_MARKER_MS = IN_FLIGHT_WRITE_GRACE_MS;

/** One shard as read: raw entries (checked on use) and its ETag. */
interface Shard {
  entries: Map<string, unknown>;
  etag: string | undefined;
}

/** Whether `next` may replace `stored`: a newer generation, or a later version of the same. */
function isNewer(stored: IndexEntry | undefined, next: IndexEntry): boolean {
  if (stored === undefined) return true;
  if (next.gen !== stored.gen) return next.gen > stored.gen;
  return next.n > stored.n;
}

export class SessionIndex {
  /**
   * Each shard as this store last read or wrote it: a change is first tried against it
   * (`If-Match` on its ETag), which saves a GET whenever no other writer came between.
   */
  readonly #known = new Map<number, Shard>();

  constructor(
    private readonly io: ObjectIO,
    readonly shards: number,
  ) {}

  /** One shard's entries. A damaged shard reads as empty (repair rebuilds it). */
  async readShard(shard: number): Promise<Shard> {
    const got = await this.io.get(shardKey(shard), 'reading the index');
    let read: Shard;
    if (got === undefined) read = { entries: new Map(), etag: undefined };
    else {
      try {
        const raw = parseJson(got.text, 'index shard').entries;
        if (typeof raw !== 'object' || raw === null) throw new Error('no entries');
        read = { entries: new Map(Object.entries(raw)), etag: got.etag };
      } catch {
        read = { entries: new Map(), etag: got.etag };
      }
    }
    this.#known.set(shard, read);
    return { entries: new Map(read.entries), etag: read.etag };
  }

  /** Every readable entry of every shard (read in parallel). */
  async readAll(): Promise<Map<string, IndexEntry>> {
    const shards = await Promise.all(
      Array.from({ length: this.shards }, (_, k) => this.readShard(k)),
    );
    const all = new Map<string, IndexEntry>();
    for (const shard of shards) {
      for (const [id, raw] of shard.entries) {
        const entry = entryFromJson(raw, id);
        if (entry !== undefined) all.set(id, entry);
      }
    }
    return all;
  }

  /**
   * Changes one shard by compare-and-swap: `change` edits the map and says whether it
   * changed anything; retried on lost races. Returns whether a change was written.
   */
  async updateShard(
    shard: number,
    change: (entries: Map<string, unknown>) => boolean,
  ): Promise<boolean> {
    const exhausted = () =>
      errors.unavailable('updating the index: too many concurrent writers on one shard');
    return retryLostRaces(
      { errors, operation: 'index update', sessionId: `index shard ${shard}`, exhausted },
      async (attempt) => {
        const known = attempt === 0 ? this.#known.get(shard) : undefined;
        const { entries, etag } = known
          ? { entries: new Map(known.entries), etag: known.etag }
          : await this.readShard(shard);
        if (!change(entries)) {
          // Judged on a copy that may be old: judge again on a fresh read.
          return known === undefined ? false : LOST_RACE;
        }
        const text = JSON.stringify({ format: FORMAT, entries: Object.fromEntries(entries) });
        const out = await this.io.put(
          shardKey(shard),
          text,
          etag === undefined ? { ifAbsent: true } : { ifMatch: etag },
          'updating the index',
        );
        if (out.written) {
          this.#known.set(shard, { entries, etag: out.etag });
          return true;
        }
        this.#known.delete(shard);
        return LOST_RACE;
      },
    );
  }

  /** Stores `entry` unless the index already holds the same or a newer version. */
  async put(id: string, entry: IndexEntry): Promise<void> {
    await this.updateShard(shardOf(id, this.shards), (entries) => {
      if (!isNewer(entryFromJson(entries.get(id), id), entry)) return false;
      entries.set(id, entryToJson(entry));
      return true;
    });
  }

  /**
   * Stores `entry` (unless the index holds the same or a newer version) without the caller
   * waiting on the shard: entries that come while a write of their shard is under way go
   * together in its next write, so a store makes one shard PUT for many commits and no
   * commit waits on an object that other sessions' writers share. Resolves whether the
   * index holds the entry (or a newer one) now; never rejects.
   */
  putLater(id: string, entry: IndexEntry): Promise<boolean> {
    const shard = shardOf(id, this.shards);
    let waiting = this.#waiting.get(shard);
    if (waiting === undefined) {
      waiting = new Map();
      this.#waiting.set(shard, waiting);
    }
    const queued = waiting;
    return new Promise<boolean>((resolve) => {
      const before = queued.get(id);
      const done = [...(before?.done ?? []), resolve];
      const newest = before === undefined || isNewer(before.entry, entry) ? entry : before.entry;
      queued.set(id, { entry: newest, done });
      if (!this.#flushing.has(shard)) this.#flush(shard);
    });
  }

  /** Entries waiting for their shard's next write, by shard: the newest of each session. */
  readonly #waiting = new Map<
    number,
    Map<string, { entry: IndexEntry; done: Array<(ok: boolean) => void> }>
  >();
  /** The shard writes of `putLater` under way. */
  readonly #flushing = new Map<number, Promise<void>>();

  /** Writes the waiting entries of `shard`, a batch at a time, until none wait. */
  #flush(shard: number): void {
    const run = (async () => {
      for (;;) {
        const batch = this.#waiting.get(shard);
        if (batch === undefined || batch.size === 0) return;
        this.#waiting.delete(shard);
        const ok = await this.updateShard(shard, (entries) => {
          let changed = false;
          for (const [id, { entry }] of batch) {
            if (!isNewer(entryFromJson(entries.get(id), id), entry)) continue;
            entries.set(id, entryToJson(entry));
            changed = true;
          }
          return changed;
        }).then(
          () => true,
          () => false,
        );
        for (const { done } of batch.values()) for (const resolve of done) resolve(ok);
      }
    })().finally(() => this.#flushing.delete(shard));
    this.#flushing.set(shard, run);
  }

  /** Removes the entry of `id` when it is of generation `gen`. */
  async remove(id: string, gen: string): Promise<void> {
    await this.updateShard(shardOf(id, this.shards), (entries) => {
      const raw = entries.get(id) as { gen?: unknown } | undefined;
      if (
        raw === undefined ||
        (typeof raw === 'object' && raw !== null && raw.gen !== gen && typeof raw.gen === 'string')
      ) {
        return false;
      }
      entries.delete(id);
      return true;
    });
  }

  /** Announces a write on `id`; returns the marker's token for `unmark`. */
  async mark(id: string): Promise<string> {
    const token = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    await this.io.putPlain(pendingKey(id, token), '', `marking a write on "${id}"`);
    return token;
  }

  /** Withdraws a marker once the index entry is written. */
  async unmark(id: string, token: string): Promise<void> {
    await this.io.delete(pendingKey(id, token), `unmarking a write on "${id}"`);
  }

  /**
   * Withdraws the marker `marking` resolves to without waiting for it: the write it
   * announced is complete (its index entry is written), so the marker only costs readers a
   * heal until it is gone, and the write resolves one round trip sooner. A marker whose
   * removal fails is removed by a reader once stale. `settled()` waits for these.
   */
  unmarkLater(id: string, marking: Promise<string>): void {
    const removal = marking
      .then((token) => this.unmark(id, token))
      .catch(() => {})
      .finally(() => this.#removals.delete(removal));
    this.#removals.add(removal);
  }

  /** Resolves once every `putLater` write begun so far has ended. */
  async writesSettled(): Promise<void> {
    while (this.#flushing.size > 0) await Promise.all([...this.#flushing.values()]);
  }

  /** Resolves once every `unmarkLater` removal begun so far has ended. */
  async settled(): Promise<void> {
    while (this.#removals.size > 0) await Promise.all([...this.#removals]);
  }

  readonly #removals = new Set<Promise<void>>();

  /** The ids of the sessions with a write marker up (one LIST). */
  async markedIds(): Promise<Set<string>> {
    const markers = await this.io.list(PENDING_PREFIX, 'reading write markers');
    const ids = new Set<string>();
    for (const m of markers) {
      const id = idOfKey(m.key, PENDING_PREFIX);
      if (id !== undefined) ids.add(id);
    }
    return ids;
  }

  /**
   * Brings the entries of every session with a write marker up to date with the session's
   * newest version (one LIST when there are none), and removes markers of dead writers.
   * Reads only heads and, when a head lags, the versions past it.
   */
  async heal(): Promise<boolean> {
    const markers = await this.io.list(PENDING_PREFIX, 'reading write markers');
    if (markers.length === 0) return false;
    const byId = new Map<string, typeof markers>();
    for (const m of markers) {
      const id = idOfKey(m.key, PENDING_PREFIX);
      if (id !== undefined) byId.set(id, [...(byId.get(id) ?? []), m]);
    }
    await Promise.all(
      [...byId].map(async ([id, found]) => {
        await this.healOne(id);
        const stale = found.filter(
          (m) => Date.now() - (m.lastModified?.getTime() ?? 0) > STALE_MARKER_MS,
        );
        for (const m of stale) await this.io.delete(m.key, 'removing a stale write marker');
      }),
    );
    return true;
  }

  /** The entry of one session made to match its newest version. */
  async healOne(id: string): Promise<void> {
    // A session that cannot be read keeps its entry until repair() judges it.
    const current = await readCurrent(this.io, id).catch((e: unknown) => {
      if (isSessionKitError(e, 'corrupt')) return undefined;
      throw e;
    });
    if (current === undefined) return;
    if (current.tombstone) await this.remove(id, current.gen);
    else await this.put(id, entryOf(current.gen, current.n, current.state));
  }
}
