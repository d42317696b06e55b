// SessionKitSession: the OpenAI Agents SDK's Session, with its history-transaction and
// rewrite capabilities, on one sessionkit session of any store.
import type {
  AgentInputItem,
  SessionHistoryRewriteArgs,
  SessionHistoryRewriteAwareSession,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents-core';
import { openStore } from '@sessionkit/core';
import { LOST_RACE } from '@sessionkit/core/adapter';
import { errors } from './errors.js';
import { applyHistoryMutations } from './mutations.js';
import {
  checkOptions,
  type SessionKitSessionOptions,
  type SessionKitSessionUrlOptions,
} from './options.js';
import { type HistoryStore, SessionHistory } from './session-history.js';
import { applyHistoryTransaction } from './transactions.js';

/**
 * A conversation of the OpenAI Agents SDK kept in a sessionkit store: pass it as
 * `run(agent, input, { session })`. Items are stored as they are, one sessionkit message
 * per item, in one sessionkit session (`getSessionId()`), so every sessionkit tool lists,
 * searches, branches, exports and prunes it.
 *
 * Every method is one or a few store calls whose cost grows with what it reads or
 * writes, never with the stored history, except `getItems()` without a limit and
 * `applyHistoryMutations`, which read the whole history. Writes are atomic; `popItem`,
 * `replace_suffix` and the mutations are optimistic (they re-read when another writer got
 * in first, for up to 20 s, then fail `unavailable`). Errors are `SessionKitError`s.
 */
export class SessionKitSession
  implements SessionHistoryTransactionAwareSession, SessionHistoryRewriteAwareSession
{
  /** The store the items live in. */
  readonly store: HistoryStore;
  readonly #history: SessionHistory;
  #ownsStore = false;

  /**
   * A session over `options.store` (borrowed). With `sessionId`, the items of that
   * sessionkit session (it is created on the first write when it does not exist);
   * without, a new id: the session is created lazily, on the first write, and reads as
   * empty before. Throws `invalid_argument` (a store without `commit`/`loadMessages`, a
   * bad id).
   */
  constructor(options: SessionKitSessionOptions) {
    const { store, sessionId, session } = checkOptions(options);
    this.store = store;
    this.#history = new SessionHistory(store, sessionId, session);
  }

  /**
   * A session on a store opened from a URL (`file:./sessions`, `postgres://…`,
   * `redis://…`, `s3://…`, `memory:`) with core's `openStore`: the session owns that
   * store, and `close()` closes it. Throws `invalid_argument` (bad URL or options, adapter
   * package not installed, a store without the capabilities) and what opening throws.
   */
  static async fromUrl(
    url: string,
    options: SessionKitSessionUrlOptions = {},
  ): Promise<SessionKitSession> {
    const { storeOptions, ...sessionOptions } = options;
    const store = await openStore<unknown>(url, storeOptions);
    try {
      const session = new SessionKitSession({ ...sessionOptions, store: store as HistoryStore });
      session.#ownsStore = true;
      return session;
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  /** The sessionkit session id. No I/O. */
  async getSessionId(): Promise<string> {
    return this.#history.id;
  }

  /**
   * The history, oldest first: all of it without `limit` (one `loadMessages`, cost grows
   * with the history), else its last `limit` items (one window read, cost grows with
   * `limit`; a fractional limit counts as the next integer, as the SDK's `MemorySession`
   * slices). `limit <= 0` → `[]` without I/O. A session not written yet → `[]`. Throws
   * `invalid_argument` (a limit that is not a number, or NaN).
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit === undefined) return (await this.#history.items()) as AgentInputItem[];
    if (typeof limit !== 'number' || Number.isNaN(limit)) {
      throw errors.invalid(`getItems: limit must be a number, got ${String(limit)}`);
    }
    if (limit <= 0) return [];
    // Infinity reads everything; a window's size is an integer a store accepts.
    const last = Number.isFinite(limit)
      ? Math.min(Math.ceil(limit), Number.MAX_SAFE_INTEGER)
      : undefined;
    return (await this.#history.items(last)) as AgentInputItem[];
  }

  /**
   * Appends `items` in one commit (all or none land; concurrent appends are all kept). No
   * items → no I/O. Creates the sessionkit session on its first write. Throws
   * `invalid_argument` (items that are not JSON: `Uint8Array`, class instances …).
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw errors.invalid('addItems: items must be an array');
    if (items.length === 0) return;
    await this.#history.commit({ append: items });
  }

  /**
   * Removes the newest item and returns it (`undefined` when empty): one window read of
   * the last item, then one commit that drops it (`truncate`) under the revision it was
   * read at. Two concurrent pops never return the same item and never remove two: the
   * loser reads again. A retry of a pop that failed `unavailable` is a new pop.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const history = this.#history;
    return history.optimistically('popItem', async () => {
      const window = await history.window(1);
      const [item] = window.messages;
      if (window.messages.length === 0) return undefined;
      const landed = await history.commitOver(window, { truncate: window.messageCount - 1 });
      return landed === LOST_RACE ? LOST_RACE : (item as AgentInputItem);
    });
  }

  /**
   * Removes every item in one commit (`truncate: 0`; cost grows with the items dropped).
   * The sessionkit session itself stays (with its title, metadata and operation ids), so
   * a retried transaction is still recognised after a clear. A session not written yet
   * stays unwritten.
   */
  async clearSession(): Promise<void> {
    await this.#history.commitIfExists({ truncate: 0 });
  }

  /**
   * Replaces the whole history with `items` (a compaction item and what follows it) in
   * one commit (`replace`), so the runner's compaction never leaves the history cleared
   * and half rebuilt. Throws `invalid_argument` (not an array, items that are not JSON).
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) {
      throw errors.invalid('replaceHistoryWithCompaction: items must be an array');
    }
    await this.#history.commit({ replace: items });
  }

  /**
   * Applies an `append_items` or `replace_suffix` transaction atomically and at most once
   * per `operationId`: a repeat with the same transaction (after a lost reply, from
   * another process) writes nothing and succeeds; the same id with another transaction,
   * or an expected suffix that is not the stored one, fails with `conflict` and leaves
   * the history unchanged. A few store calls: two probes of the operation log, an empty
   * commit recording the transaction's digest, and the commit of the change (a window of
   * `expectedSuffix.length` items is read first for `replace_suffix`). Throws
   * `invalid_argument` (arguments the SDK's `MemorySession` rejects too, and items that
   * are not JSON) before any I/O.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    await applyHistoryTransaction(this.#history, args);
  }

  /**
   * Applies `replace_function_call` mutations as the SDK's `applySessionHistoryMutations`
   * does, atomically: one read of the whole history and one commit that rewrites it from
   * the first changed item (`truncate` + `append`). Nothing to change → nothing written.
   */
  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    await applyHistoryMutations(this.#history, args);
  }

  /**
   * Closes the store when this session opened it (`fromUrl`); a borrowed store stays open.
   * Idempotent.
   */
  async close(): Promise<void> {
    if (this.#ownsStore) await this.store.close();
  }
}
