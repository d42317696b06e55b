// The operation ids a session remembers, for backends that keep them in process memory
// (or rebuild them from their own log): the last MAX_REMEMBERED_OPERATIONS, in order.
import { MAX_REMEMBERED_OPERATIONS } from '../input/commit-input.js';
import type { CommitResult } from '../types.js';

/**
 * The recorded commits of one session by operation id, oldest first; recording one more
 * than `capacity` forgets the oldest. `find` and `record` are O(1) expected (O(capacity)
 * at worst, and amortised over the table's rebuilds).
 *
 * Layout, for a store holding many live sessions written round robin, where each commit
 * finds its session's log out of the processor's caches and every memory line touched
 * costs more than the work done on it: the ids sit in a ring of slots, the slots' results
 * as numbers side by side in one typed array (kept result objects would also be copied by
 * every young-generation collection), and an open-addressing table maps ids to slots
 * through buckets that hold a slot number and the id's hash side by side, so a probe
 * compares a string only on a matching hash. Forgetting an id touches no bucket: its
 * bucket keeps naming the slot, which no longer holds the id, so no probe can match it
 * (a probe matches a bucket only when the slot it names holds the id probed for). Such
 * stale buckets are dropped when the table, at most half full, is rebuilt from the live
 * slots. The table and the slots start empty and grow as ids come: a session that never
 * sends an id costs a few empty arrays.
 *
 * Hashing reads an id's length and its last SAMPLED_CHARS chars only: reading a char of a
 * string costs several nanoseconds, and the tail is where ids differ (a random UUID's last
 * 16 chars hold 60 random bits; counters and sequence numbers end ids). Ids alike in their
 * tails and lengths but not elsewhere would share a hash and make probes long, so a probe
 * that passes more than MAX_ALIKE_PROBED buckets of its hash naming other ids switches the
 * log, for good, to hashing whole ids (rehashing what it holds once): probes stay short
 * for any ids, at the cost of the whole hash for that session only.
 */
export class OperationLog {
  /** Per slot: the id. */
  readonly #ids: string[] = [];
  /** Per slot, SLOT_STRIDE numbers: its result's revision (`NaN` once a newer slot holds its id), message count and `updatedAt` (ms), and its id's hash. */
  #slots: Float64Array = EMPTY_SLOTS;
  /** Per bucket, two numbers: 1 + the slot named there (0 empty), and the hash of the id it was recorded with. */
  #table: Int32Array = EMPTY_TABLE;
  #mask = 0;
  /** Buckets in use, live or stale. */
  #used = 0;
  /** The table's size at full capacity: the first power of two at least four times it. */
  readonly #maxBuckets: number;
  /** Per log, so that ids chosen to collide in one log collide nowhere else. */
  readonly #seed = (Math.random() * 0x1_0000_0000) | 0;
  /** The slot of the oldest id once the ring is full (0 until then). */
  #oldest = 0;
  readonly #capacity: number;
  /** The id `find` hashed last, and its hash: a commit records the id it just looked up. */
  #lastId: string | undefined;
  #lastHash = 0;
  /** Whether ids are hashed whole (else by length and tail); see the class comment. */
  #wholeIds = false;
  /** Set by a probe that passed more than MAX_ALIKE_PROBED buckets of its hash naming other ids. */
  #alikeSeen = false;

  /**
   * A log remembering at most `capacity` ids (default `MAX_REMEMBERED_OPERATIONS`; 0
   * remembers none). Allocates no table until the first id. Throws `RangeError` unless
   * `capacity` is an integer from 0 to 2^24.
   */
  constructor(capacity: number = MAX_REMEMBERED_OPERATIONS) {
    if (!Number.isInteger(capacity) || capacity < 0 || capacity > 2 ** 24) {
      throw new RangeError(
        `OperationLog: capacity must be an integer from 0 to 2^24, got ${capacity}`,
      );
    }
    this.#capacity = capacity;
    this.#maxBuckets = bucketsFor(capacity);
  }

  /** How many ids are remembered (an id recorded twice while remembered counts twice). */
  get size(): number {
    return this.#ids.length;
  }

  /**
   * Whether this log hashes whole ids: false until it meets ids alike in their lengths and
   * last SAMPLED_CHARS chars but not elsewhere (then true for good). Answers never depend
   * on it; only the length of a lookup does.
   */
  get hashesWholeIds(): boolean {
    return this.#wholeIds;
  }

  /** The result recorded for `operationId` (a fresh copy); `undefined` when none or no id. */
  find(operationId: string | undefined): CommitResult | undefined {
    if (operationId === undefined || this.#capacity === 0) return undefined;
    if (this.#alikeSeen) this.#hashWholeIds();
    const hash = this.#hash(operationId);
    this.#lastId = operationId;
    this.#lastHash = hash;
    if (this.#used === 0) return undefined;
    const bucket = this.#bucketOf(operationId, hash);
    return bucket < 0 ? undefined : this.#resultAt((this.#table[2 * bucket] as number) - 1);
  }

  /**
   * Records the result of the commit named `operationId` as the newest, forgetting the
   * oldest past capacity. A commit without an id (`undefined`) records nothing. An id
   * recorded again while remembered (a log rebuilt from records naming it twice) moves to
   * the newest slot; its older slot is then stale, skipped by `entries`.
   */
  record(operationId: string | undefined, result: CommitResult): void {
    if (operationId === undefined || this.#capacity === 0) return;
    if (this.#alikeSeen) this.#hashWholeIds();
    let slot = this.#ids.length;
    if (slot >= this.#capacity) {
      slot = this.#oldest;
      this.#oldest = (slot + 1) % this.#capacity;
    } else if (SLOT_STRIDE * (slot + 1) > this.#slots.length) {
      this.#growSlots();
    }
    // The slot's result first: a rebuild below places the slots live by then.
    this.#ids[slot] = operationId;
    const at = SLOT_STRIDE * slot;
    this.#slots[at] = result.revision;
    this.#slots[at + 1] = result.messageCount;
    this.#slots[at + 2] = result.updatedAt.getTime();
    const hash = operationId === this.#lastId ? this.#lastHash : this.#hash(operationId);
    this.#slots[at + 3] = hash;
    const found = this.#used === 0 ? -1 : this.#bucketOf(operationId, hash, slot);
    if (found >= 0) {
      // Recorded before and still remembered: its older slot goes stale.
      this.#slots[SLOT_STRIDE * ((this.#table[2 * found] as number) - 1)] = Number.NaN;
      this.#table[2 * found] = slot + 1;
      return;
    }
    // At most half full, counting stale buckets: else a new table (which places this slot).
    if (2 * (this.#used + 1) > this.#table.length / 2) {
      this.#rebuild();
      return;
    }
    const bucket = -1 - found;
    this.#table[2 * bucket] = slot + 1;
    this.#table[2 * bucket + 1] = hash;
    this.#used++;
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

  /**
   * FNV-1a, from the log's seed, of the id's length and its UTF-16 code units: the last
   * SAMPLED_CHARS of them, or all once the log hashes whole ids (a signed 32-bit number).
   */
  #hash(id: string): number {
    const length = id.length;
    let hash = Math.imul(this.#seed ^ 0x811c9dc5 ^ length, 0x01000193);
    const from = this.#wholeIds ? 0 : Math.max(0, length - SAMPLED_CHARS);
    for (let i = from; i < length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
    return hash;
  }

  /** From now on ids are hashed whole: the live slots rehashed, the table rebuilt. */
  #hashWholeIds(): void {
    this.#alikeSeen = false;
    if (this.#wholeIds) return;
    this.#wholeIds = true;
    this.#lastId = undefined;
    const live = Math.min(this.#capacity, this.#ids.length);
    for (let slot = 0; slot < live; slot++) {
      if (this.#isLive(slot)) {
        this.#slots[SLOT_STRIDE * slot + 3] = this.#hash(this.#ids[slot] as string);
      }
    }
    if (this.#used > 0) this.#rebuild();
  }

  /**
   * The bucket naming a live slot that holds `id` (other than `except`, the slot being
   * recorded), or `-1 - b` for the empty bucket `b` where `id` would go.
   */
  #bucketOf(id: string, hash: number, except = -1): number {
    const table = this.#table;
    let alike = 0;
    let bucket = hash & this.#mask;
    for (; ; bucket = (bucket + 1) & this.#mask) {
      const entry = table[2 * bucket] as number;
      if (entry === 0) break;
      if (table[2 * bucket + 1] !== hash || entry - 1 === except) continue;
      if (this.#ids[entry - 1] === id && this.#isLive(entry - 1)) break;
      alike++;
    }
    if (alike > MAX_ALIKE_PROBED) this.#alikeSeen = true;
    return table[2 * bucket] === 0 ? -1 - bucket : bucket;
  }

  /** Whether `slot` holds the newest record of its id. */
  #isLive(slot: number): boolean {
    return !Number.isNaN(this.#slots[SLOT_STRIDE * slot]);
  }

  /** Room for twice the slots, at most `capacity`. */
  #growSlots(): void {
    const count = Math.min(this.#capacity, Math.max(MIN_SLOTS, 2 * this.#ids.length));
    const slots = new Float64Array(SLOT_STRIDE * count);
    slots.set(this.#slots);
    this.#slots = slots;
  }

  /**
   * A new table, at most half full, naming only the live slots: the stale buckets of
   * forgotten ids are dropped, and it grows with the ids remembered.
   */
  #rebuild(): void {
    const live = Math.min(this.#capacity, this.#ids.length);
    const buckets = Math.min(this.#maxBuckets, bucketsFor(live));
    const table = new Int32Array(2 * buckets);
    const mask = buckets - 1;
    let used = 0;
    for (let slot = 0; slot < live; slot++) {
      if (!this.#isLive(slot)) continue;
      const hash = this.#slots[SLOT_STRIDE * slot + 3] as number;
      let bucket = hash & mask;
      while (table[2 * bucket] !== 0) bucket = (bucket + 1) & mask;
      table[2 * bucket] = slot + 1;
      table[2 * bucket + 1] = hash;
      used++;
    }
    this.#table = table;
    this.#mask = mask;
    this.#used = used;
  }

  #resultAt(slot: number): CommitResult {
    const at = SLOT_STRIDE * slot;
    return {
      revision: this.#slots[at] as number,
      messageCount: this.#slots[at + 1] as number,
      updatedAt: new Date(this.#slots[at + 2] as number),
    };
  }
}

/** The buckets for `ids` live ids: a power of two at least four times as many. */
function bucketsFor(ids: number): number {
  let buckets = MIN_BUCKETS;
  while (buckets < 4 * ids) buckets *= 2;
  return buckets;
}

/** The chars of an id's tail that its hash reads (with its length) until ids alike in them come. */
const SAMPLED_CHARS = 16;
/** Buckets of a probe's hash naming other ids that a probe passes before whole ids are hashed. */
const MAX_ALIKE_PROBED = 2;
/** Numbers per slot in `#slots`. */
const SLOT_STRIDE = 4;
const MIN_BUCKETS = 8;
const MIN_SLOTS = 4;
const EMPTY_TABLE = new Int32Array(0);
const EMPTY_SLOTS = new Float64Array(0);

/** A caller-owned copy of a commit's result. */
export function copyResult(result: CommitResult): CommitResult {
  return {
    revision: result.revision,
    messageCount: result.messageCount,
    updatedAt: new Date(result.updatedAt.getTime()),
  };
}
