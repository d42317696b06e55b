// The operation ids a session remembers, for backends that keep them in process memory
// (or rebuild them from their own log): the last MAX_REMEMBERED_OPERATIONS, in order.
import { MAX_REMEMBERED_OPERATIONS } from '../input/commit-input.js';
import type { CommitResult } from '../types.js';

/**
 * The recorded commits of one session by operation id, oldest first; recording one more
 * than `capacity` forgets the oldest. `find` and `record` are O(1) amortized and `record`
 * allocates nothing but the map's entry: the results are numbers in a ring of slots, and
 * a map from id to slot whose entries of forgotten ids are left in place (the slot then
 * names another id) and dropped all at once when the map holds twice the capacity. A
 * `Map` of result objects with a delete per forgotten id cost each commit with an id
 * several microseconds once full: deleting leaves holes V8 walks on later inserts and
 * lookups, and the kept result objects are copied by every young-generation collection.
 */
export class OperationLog {
  #slots = new Map<string, number>();
  /** Per slot: the id. */
  #ids: string[] = [];
  /** Per slot, three numbers: its result's revision, message count and `updatedAt` (ms), side by side so that a record touches one place. */
  #results: number[] = [];
  /** The slot of the oldest id once the ring is full (0 until then). */
  #oldest = 0;
  readonly #capacity: number;

  /** A log remembering at most `capacity` ids (default `MAX_REMEMBERED_OPERATIONS`; 0 remembers none). */
  constructor(capacity: number = MAX_REMEMBERED_OPERATIONS) {
    this.#capacity = capacity;
  }

  /** How many ids are remembered (an id recorded twice while remembered counts twice). */
  get size(): number {
    return this.#ids.length;
  }

  /** The result recorded for `operationId` (a fresh copy); `undefined` when none or no id. */
  find(operationId: string | undefined): CommitResult | undefined {
    if (operationId === undefined) return undefined;
    const slot = this.#slotOf(operationId);
    return slot === undefined ? undefined : this.#resultAt(slot);
  }

  /**
   * Records the result of the commit named `operationId` as the newest, forgetting the
   * oldest past capacity. A commit without an id (`undefined`) records nothing.
   */
  record(operationId: string | undefined, result: CommitResult): void {
    if (operationId === undefined || this.#capacity < 1) return;
    // Rebuilt before the oldest slot is taken: the ring's order still starts at it.
    if (this.#slots.size >= 2 * this.#capacity) this.#slots = this.#liveSlots();
    let slot = this.#ids.length;
    if (slot >= this.#capacity) {
      slot = this.#oldest;
      this.#oldest = (slot + 1) % this.#capacity;
    }
    // No lookup first: on a commit's path the id was just looked up (`find`) and is new. An
    // id recorded again while remembered (a log rebuilt from records naming it twice)
    // moves to the newest slot; its older slot is then stale, skipped by `entries`.
    this.#slots.set(operationId, slot);
    this.#ids[slot] = operationId;
    const at = 3 * slot;
    this.#results[at] = result.revision;
    this.#results[at + 1] = result.messageCount;
    this.#results[at + 2] = result.updatedAt.getTime();
  }

  /** The remembered `[operationId, result]` pairs, oldest first (fresh copies). */
  entries(): [string, CommitResult][] {
    const out: [string, CommitResult][] = [];
    for (const slot of this.#slotsOldestFirst()) {
      const id = this.#ids[slot] as string;
      if (this.#slots.get(id) === slot) out.push([id, this.#resultAt(slot)]);
    }
    return out;
  }

  /** The ring's slots, oldest first. */
  *#slotsOldestFirst(): Generator<number> {
    const n = this.#ids.length;
    for (let i = 0; i < n; i++) yield (this.#oldest + i) % n;
  }

  /** A map of the ids in the ring only, each to its newest slot. */
  #liveSlots(): Map<string, number> {
    const slots = new Map<string, number>();
    for (const slot of this.#slotsOldestFirst()) slots.set(this.#ids[slot] as string, slot);
    return slots;
  }

  /** The slot holding `operationId` now, `undefined` when it is not remembered. */
  #slotOf(operationId: string): number | undefined {
    const slot = this.#slots.get(operationId);
    return slot !== undefined && this.#ids[slot] === operationId ? slot : undefined;
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
