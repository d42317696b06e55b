// The operation ids a session remembers, for backends that keep them in process memory
// (or rebuild them from their own log): the last MAX_REMEMBERED_OPERATIONS, in order.
import { MAX_REMEMBERED_OPERATIONS } from '../input/commit-input.js';
import type { CommitResult } from '../types.js';

/**
 * The recorded commits of one session by operation id, oldest first; recording one more
 * than `capacity` forgets the oldest. `find` and `record` are O(1) expected (O(capacity)
 * at worst, a table at most half full) and `record` allocates nothing: the ids and their
 * results sit in a ring of slots (results as numbers: kept result objects would be copied
 * by every young-generation collection), found through an open-addressing table of slot
 * numbers keyed by the id's hash. A `Map` from id to slot cost a commit with an id about
 * a microsecond more (an entry per id written and deleted in a table the collector walks).
 */
export class OperationLog {
  /** Per slot: the id. */
  #ids: string[] = [];
  /** Per slot: the id's hash. */
  readonly #hashes: Uint32Array;
  /** Per slot, three numbers: its result's revision, message count and `updatedAt` (ms), side by side so that a record touches one place. */
  #results: number[] = [];
  /** Per bucket: 1 + the slot whose id hashes there (or was pushed on from there), 0 empty. */
  readonly #buckets: Int32Array;
  readonly #mask: number;
  /** Per log, so that ids chosen to collide in one log collide nowhere else. */
  readonly #seed = (Math.random() * 0x1_0000_0000) >>> 0;
  /** The slot of the oldest id once the ring is full (0 until then). */
  #oldest = 0;
  readonly #capacity: number;
  /** The id `find` hashed last, and its hash: a commit records the id it just looked up. */
  #lastId: string | undefined;
  #lastHash = 0;

  /**
   * A log remembering at most `capacity` ids (default `MAX_REMEMBERED_OPERATIONS`; 0
   * remembers none). Throws `RangeError` unless `capacity` is an integer from 0 to 2^24.
   */
  constructor(capacity: number = MAX_REMEMBERED_OPERATIONS) {
    if (!Number.isInteger(capacity) || capacity < 0 || capacity > 2 ** 24) {
      throw new RangeError(
        `OperationLog: capacity must be an integer from 0 to 2^24, got ${capacity}`,
      );
    }
    this.#capacity = capacity;
    let buckets = 4;
    while (buckets < 2 * this.#capacity) buckets *= 2;
    this.#buckets = new Int32Array(buckets);
    this.#mask = buckets - 1;
    this.#hashes = new Uint32Array(this.#capacity);
  }

  /** How many ids are remembered (an id recorded twice while remembered counts twice). */
  get size(): number {
    return this.#ids.length;
  }

  /** The result recorded for `operationId` (a fresh copy); `undefined` when none or no id. */
  find(operationId: string | undefined): CommitResult | undefined {
    if (operationId === undefined || this.#capacity === 0) return undefined;
    const hash = this.#hash(operationId);
    this.#lastId = operationId;
    this.#lastHash = hash;
    const bucket = this.#bucketOf(operationId, hash);
    return bucket < 0 ? undefined : this.#resultAt((this.#buckets[bucket] as number) - 1);
  }

  /**
   * Records the result of the commit named `operationId` as the newest, forgetting the
   * oldest past capacity. A commit without an id (`undefined`) records nothing. An id
   * recorded again while remembered (a log rebuilt from records naming it twice) moves to
   * the newest slot; its older slot is then stale, skipped by `entries`.
   */
  record(operationId: string | undefined, result: CommitResult): void {
    if (operationId === undefined || this.#capacity === 0) return;
    let slot = this.#ids.length;
    if (slot >= this.#capacity) {
      slot = this.#oldest;
      this.#oldest = (slot + 1) % this.#capacity;
      this.#forget(slot);
    }
    const hash = operationId === this.#lastId ? this.#lastHash : this.#hash(operationId);
    const bucket = this.#bucketOf(operationId, hash);
    this.#ids[slot] = operationId;
    this.#hashes[slot] = hash;
    this.#buckets[bucket < 0 ? -1 - bucket : bucket] = slot + 1;
    const at = 3 * slot;
    this.#results[at] = result.revision;
    this.#results[at + 1] = result.messageCount;
    this.#results[at + 2] = result.updatedAt.getTime();
  }

  /** The remembered `[operationId, result]` pairs, oldest first (fresh copies). */
  entries(): [string, CommitResult][] {
    const out: [string, CommitResult][] = [];
    const n = this.#ids.length;
    for (let i = 0; i < n; i++) {
      const slot = (this.#oldest + i) % n;
      if (this.#isLive(slot)) out.push([this.#ids[slot] as string, this.#resultAt(slot)]);
    }
    return out;
  }

  /** FNV-1a of the id's UTF-16 code units, from the log's seed. */
  #hash(id: string): number {
    let hash = this.#seed ^ 0x811c9dc5;
    for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
    return hash >>> 0;
  }

  /** The bucket naming `id`'s slot, or `-1 - b` for the empty bucket `b` where it would go. */
  #bucketOf(id: string, hash: number): number {
    for (let bucket = hash & this.#mask; ; bucket = (bucket + 1) & this.#mask) {
      const entry = this.#buckets[bucket] as number;
      if (entry === 0) return -1 - bucket;
      if (this.#hashes[entry - 1] === hash && this.#ids[entry - 1] === id) return bucket;
    }
  }

  /** Whether `slot` holds the newest record of its id. */
  #isLive(slot: number): boolean {
    const bucket = this.#bucketOf(this.#ids[slot] as string, this.#hashes[slot] as number);
    return bucket >= 0 && this.#buckets[bucket] === slot + 1;
  }

  /**
   * Empties the bucket of `slot`'s id unless a newer slot holds the id, shifting back the
   * entries probed past it (linear probing's deletion, which leaves no tombstones).
   */
  #forget(slot: number): void {
    let hole = this.#bucketOf(this.#ids[slot] as string, this.#hashes[slot] as number);
    if (hole < 0 || this.#buckets[hole] !== slot + 1) return;
    const mask = this.#mask;
    for (let bucket = (hole + 1) & mask; ; bucket = (bucket + 1) & mask) {
      const entry = this.#buckets[bucket] as number;
      if (entry === 0) break;
      const home = (this.#hashes[entry - 1] as number) & mask;
      // The entry may move into the hole unless its home lies between the hole and it.
      if (((bucket - home) & mask) >= ((bucket - hole) & mask)) {
        this.#buckets[hole] = entry;
        hole = bucket;
      }
    }
    this.#buckets[hole] = 0;
  }

  #resultAt(slot: number): CommitResult {
    const at = 3 * slot;
    return {
      revision: this.#results[at] as number,
      messageCount: this.#results[at + 1] as number,
      updatedAt: new Date(this.#results[at + 2] as number),
    };
  }
}

/** A caller-owned copy of a commit's result. */
export function copyResult(result: CommitResult): CommitResult {
  return {
    revision: result.revision,
    messageCount: result.messageCount,
    updatedAt: new Date(result.updatedAt.getTime()),
  };
}
