// The operation ids a session remembers, for backends that keep them in process memory
// (or rebuild them from their own log): the last MAX_REMEMBERED_OPERATIONS, in order.
import { MAX_REMEMBERED_OPERATIONS } from '../input/commit-input.js';
import type { CommitResult } from '../types.js';

/**
 * The recorded commits of one session by operation id, oldest first; recording one more
 * than `capacity` forgets the oldest. `find` and `record` are O(1).
 */
export class OperationLog {
  readonly #results = new Map<string, CommitResult>();
  readonly #capacity: number;

  /** A log remembering at most `capacity` ids (default `MAX_REMEMBERED_OPERATIONS`). */
  constructor(capacity: number = MAX_REMEMBERED_OPERATIONS) {
    this.#capacity = capacity;
  }

  /** How many ids are remembered. */
  get size(): number {
    return this.#results.size;
  }

  /** The result recorded for `operationId` (a fresh copy); `undefined` when none or no id. */
  find(operationId: string | undefined): CommitResult | undefined {
    if (operationId === undefined) return undefined;
    const r = this.#results.get(operationId);
    return r === undefined ? undefined : copyResult(r);
  }

  /**
   * Records the result of the commit named `operationId`, forgetting the oldest past
   * capacity. A commit without an id (`undefined`) records nothing.
   */
  record(operationId: string | undefined, result: CommitResult): void {
    if (operationId === undefined) return;
    this.#results.delete(operationId);
    this.#results.set(operationId, copyResult(result));
    while (this.#results.size > this.#capacity) {
      const oldest = this.#results.keys().next().value as string;
      this.#results.delete(oldest);
    }
  }

  /** The remembered `[operationId, result]` pairs, oldest first (fresh copies). */
  entries(): [string, CommitResult][] {
    return [...this.#results].map(([id, r]) => [id, copyResult(r)]);
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
