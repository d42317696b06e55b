// SessionKitSaver: LangGraph's BaseCheckpointSaver on any sessionkit store. One session per
// (thread, namespace) holds that namespace's checkpoints and writes as an append-only list
// of records (see records.ts); every write is one conditional commit of one record.
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  copyCheckpoint,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
} from '@langchain/langgraph-checkpoint';
import {
  type Committer,
  isCommitter,
  isSessionKitError,
  openStore,
  type Store,
} from '@sessionkit/core';
import { ArrayValues } from './arrays.js';
import { addressOf, checkpointIdOf, jsonEqual, singleRecord, sleep } from './config.js';
import { storedRecord } from './format.js';
import {
  type Blob,
  type CheckpointRecord,
  checkpointRecord,
  checkpointRefs,
  type Head,
  loadValue,
  type Ref,
  type Stored,
  storeValue,
  type ThreadRecord,
  type WritesRecord,
} from './records.js';
import { keptRecords } from './retention.js';
import { type SessionAddress, type ThreadPage, ThreadSessions } from './sessions.js';
import { StaleView, ThreadView } from './view.js';

/** Options of `SessionKitSaver`. */
export interface SessionKitSaverOptions {
  /** The folder of every thread session (what `sessionkit list --folder` shows). Default `"langgraph"`. */
  folder?: string | undefined;
  /** The first part of every thread session id. Default `"lg"`. */
  idPrefix?: string | undefined;
  /**
   * How many array channel values (a thread's `messages`) the saver remembers, so that a
   * put stores only the items added since. Default 64; 0 stores every value whole.
   */
  cachedValues?: number | undefined;
  /** LangGraph's serializer for checkpoints and writes. Default: LangGraph's JSON serializer. */
  serde?: SerializerProtocol | undefined;
}

/** Options of `SessionKitSaver.fromUrl`: the saver's, plus the store's own options. */
export interface SessionKitSaverUrlOptions extends SessionKitSaverOptions {
  /** Passed to `openStore` (an adapter's connection options). */
  storeOptions?: Record<string, unknown> | undefined;
}

const MAX_ATTEMPTS = 200;

/**
 * A LangGraph checkpointer over a sessionkit store.
 *
 * Each (thread_id, checkpoint_ns) pair is one session (`sessionIdFor`): the root namespace's
 * session is the thread, another namespace's session is its child. A `put` or `putWrites`
 * appends one record in one conditional commit (revision-checked, retried on `conflict`),
 * so writers in several processes never lose or tear each other's writes. Reading the
 * latest checkpoint reads the last record (the head), the checkpoint's record, the records
 * holding its channel values and its writes, never the rest of the thread. Errors are the
 * store's (`SessionKitError`) or an `Error` for a config without `thread_id`.
 */
export class SessionKitSaver extends BaseCheckpointSaver {
  /** The store the saver writes to. */
  readonly store: Store<unknown> & Committer<unknown>;
  readonly #sessions: ThreadSessions;
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #arrays: ArrayValues;
  #ownsStore = false;

  /**
   * A saver over `store` (borrowed: `close()` leaves it open). The store must offer
   * `commit` (every first-party adapter does). Throws `TypeError` otherwise.
   */
  constructor(store: Store<unknown>, options: SessionKitSaverOptions = {}) {
    super(options.serde);
    if (!isCommitter(store))
      throw new TypeError('[sessionkit/langgraph] the store must offer commit (a Committer)');
    this.store = store;
    this.#arrays = new ArrayValues(this.serde, options.cachedValues ?? 64);
    this.#sessions = new ThreadSessions(
      store,
      options.folder ?? 'langgraph',
      options.idPrefix ?? 'lg',
    );
  }

  /**
   * A saver over the store at `url` (`file:./threads`, `postgres://…`, `redis://…`,
   * `s3://…`), opened with core's `openStore` and owned: `close()` closes it. Throws
   * what `openStore` throws (`invalid_argument` for a bad URL or a missing adapter).
   */
  static async fromUrl(
    url: string,
    options: SessionKitSaverUrlOptions = {},
  ): Promise<SessionKitSaver> {
    const { storeOptions, ...saverOptions } = options;
    const store = await openStore<unknown>(url, storeOptions);
    try {
      const saver = new SessionKitSaver(store, saverOptions);
      saver.#ownsStore = true;
      return saver;
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  /** The session id that holds `(threadId, namespace)`. No I/O. */
  sessionIdFor(threadId: string, namespace = ''): string {
    return this.#sessions.sessionId(threadId, namespace);
  }

  /**
   * The checkpoint of `config` (its `checkpoint_id`, or the latest of the thread and
   * namespace) with its channel values, metadata, parent and pending writes (in
   * `writesSortKey` order), or undefined. Latest: a read of the last record plus the
   * records that checkpoint needs; by id: a binary search over the thread's records.
   */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const address = addressOf(config, 'getTuple', false);
    if (address === undefined) return undefined;
    const wanted = checkpointIdOf(config);
    const sessionId = this.#sessions.sessionId(address.threadId, address.namespace);
    return this.#retrying(async () => {
      const view = await ThreadView.open(this.store, sessionId);
      if (view === undefined) return undefined;
      const record =
        wanted === undefined
          ? view.head.cp === null
            ? undefined
            : ((await view.get(view.head.at)) as CheckpointRecord)
          : await view.findCheckpoint(wanted);
      return record === undefined ? undefined : this.#tuple(view, record, address);
    });
  }

  /**
   * Checkpoints newest first: of one thread and namespace, of every namespace of a thread
   * (`checkpoint_ns` absent), or of every thread (`thread_id` absent), only those with an
   * id before `before`'s, whose metadata has every `filter` entry, at most `limit`.
   * Reads backwards through each thread's records, so a `limit` reads about what it
   * returns; a thread_id never touches another thread's sessions.
   */
  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const beforeId = before === undefined ? undefined : checkpointIdOf(before);
    const only = checkpointIdOf(config);
    const threadId = config.configurable?.thread_id;
    const namespace = config.configurable?.checkpoint_ns;
    for await (const address of this.#sessions.addresses(
      threadId === undefined ? undefined : String(threadId),
      typeof namespace === 'string' ? namespace : undefined,
    )) {
      const tuples = await this.#retrying(() =>
        this.#listOne(address, { remaining, beforeId, only, filter }),
      );
      for (const tuple of tuples) {
        yield tuple;
        remaining -= 1;
        if (remaining <= 0) return;
      }
    }
  }

  /**
   * Stores `checkpoint` (with the values of the channels in `newVersions` only; the others
   * are found where an earlier checkpoint stored them) and its metadata, as a child of
   * `config`'s `checkpoint_id`. One commit of one record. Returns the checkpoint's config.
   * Throws `Error` without `thread_id`, and what the store throws.
   */
  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const address = addressOf(config, 'put', true)!;
    const parent = checkpointIdOf(config);
    const prepared = copyCheckpoint(checkpoint);
    const values = prepared.channel_values as Record<string, unknown>;
    const { channel_values: _values, ...rest } = prepared;
    const versions = prepared.channel_versions as Record<string, number | string>;
    const [cp, md] = await Promise.all([
      storeValue(this.serde, rest),
      storeValue(this.serde, metadata),
    ]);
    // Channels in newVersions with a value; each is serialized once, however often the
    // write is retried (an array only as far as it is not shared with its parent's).
    const changed = Object.keys(newVersions).filter(
      (channel) => Object.hasOwn(values, channel) && values[channel] !== undefined,
    );
    const whole = new Map<string, Promise<Stored>>();
    const wholeValue = (channel: string) => () => {
      let stored = whole.get(channel);
      if (stored === undefined) {
        stored = storeValue(this.serde, values[channel]);
        whole.set(channel, stored);
      }
      return stored;
    };
    let remember: (() => void)[] = [];
    await this.#append(
      address,
      async (view) => {
        const p = view.count;
        const parentRefs = await this.#parentRefs(view, parent);
        const r = checkpointRefs(versions, changed, p, parentRefs, view.head.heads);
        const heads = { ...view.head.heads };
        const b: Record<string, Blob> = {};
        remember = [];
        for (const channel of changed) {
          heads[channel] = [versions[channel] ?? newVersions[channel]!, p];
          const base = (parentRefs ?? view.head.heads)[channel]?.[1];
          const encoded = await this.#arrays.encode(
            view,
            channel,
            values[channel],
            wholeValue(channel),
            p,
            base,
            parent,
          );
          b[channel] = encoded.blob;
          remember.push(encoded.remember);
        }
        return checkpointRecord(view.head, { id: checkpoint.id, parent, p, cp, md, b, r, heads });
      },
      () => {
        for (const f of remember) f();
      },
    );
    return {
      configurable: {
        thread_id: address.threadId,
        checkpoint_ns: address.namespace,
        checkpoint_id: checkpoint.id,
      },
    };
  }

  /**
   * Stores a task's writes for `config`'s checkpoint (`taskPath` kept for
   * `writesSortKey` order). One commit of one record. Throws `Error` without `thread_id`
   * or `checkpoint_id`, and what the store throws.
   */
  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const address = addressOf(config, 'putWrites', true)!;
    const to = checkpointIdOf(config);
    if (to === undefined)
      throw new Error(
        '[sessionkit/langgraph] putWrites: config.configurable.checkpoint_id is required',
      );
    const stored: [string, number, Stored][] = [];
    for (const [index, [channel, value]] of writes.entries())
      stored.push([channel, WRITES_IDX_MAP[channel] ?? index, await storeValue(this.serde, value)]);
    const build = async (view: ThreadView) => {
      const p = view.count;
      const head = view.head;
      const h: Head =
        to === head.cp
          ? { ...head, w: [...head.w, p] }
          : { ...head, late: { ...head.late, [to]: [...(head.late[to] ?? []), p] } };
      const record: WritesRecord = {
        lg: 3,
        g: head.g,
        p,
        key: head.cp ?? '',
        h,
        k: 'w',
        to,
        task: taskId,
        path: taskPath ?? '',
        w: stored,
      };
      return record;
    };
    // Remembered so that the next checkpoint's new items can point at these writes.
    await this.#append(address, build, (view, record) =>
      this.#arrays.wrote(view, to, record.p, stored),
    );
  }

  /**
   * Per channel, the pending writes along the parent chain of `config`'s checkpoint (oldest
   * first, each checkpoint's in `writesSortKey` order) and the nearest ancestor's stored
   * value as the seed: LangGraph's own walk over `getTuple`, whose writes this saver
   * returns in that order. Each ancestor costs one `getTuple` by id.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): ReturnType<BaseCheckpointSaver['getDeltaChannelHistory']> {
    return super.getDeltaChannelHistory(options);
  }

  /** Deletes every checkpoint and write of the thread, in every namespace. */
  async deleteThread(threadId: string): Promise<void> {
    // Positions start again in a thread created anew: nothing remembered may point there.
    this.#arrays.clear();
    await this.#sessions.deleteThread(String(threadId));
  }

  /**
   * Thread ids newest first (by the root namespace's last write), with keyset paging:
   * pass the returned `next` as `startAfter` for the following page. `limit` 1–1000,
   * default 50. Reads session summaries only, never checkpoints.
   */
  async threads(
    options: { limit?: number; startAfter?: { updatedAt: Date; id: string } } = {},
  ): Promise<ThreadPage> {
    const limit = options.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new RangeError(
        '[sessionkit/langgraph] threads: limit must be an integer from 1 to 1000',
      );
    return this.#sessions.threads(limit, options.startAfter);
  }

  /**
   * Copies thread `from` (every namespace, every checkpoint and write) to the new thread
   * `to`, which then evolves on its own. One `create` per namespace. Throws `not_found`
   * when `from` does not exist, `exists` when `to` does.
   */
  async copyThread(from: string, to: string): Promise<void> {
    await this.#sessions.copy(String(from), String(to));
  }

  /**
   * Keeps the newest `keep` checkpoints (by id) of each namespace of the thread, with
   * their values and writes, and drops the others, in one conditional commit per
   * namespace (retried on `conflict`). Returns how many checkpoints were dropped.
   * Throws `RangeError` unless `keep` is an integer ≥ 1.
   */
  async keepLast(threadId: string, keep: number): Promise<number> {
    if (!Number.isInteger(keep) || keep < 1)
      throw new RangeError('[sessionkit/langgraph] keepLast: keep must be an integer ≥ 1');
    let dropped = 0;
    for await (const address of this.#sessions.addresses(String(threadId), undefined)) {
      const sessionId = this.#sessions.sessionId(address.threadId, address.namespace);
      dropped += await this.#locked(sessionId, () =>
        this.#retrying(async () => {
          const view = await ThreadView.open(this.store, sessionId);
          if (view === undefined) return 0;
          const records = await keptRecords(
            view,
            keep,
            async (v, ch, p) => (await this.#arrays.decode(v, ch, p))?.stored,
          );
          if (records === undefined) return 0;
          this.#arrays.clear();
          const before = new Set<string>();
          for await (const r of view.descending()) before.add(r.id);
          try {
            await this.store.commit(sessionId, {
              expectedRevision: view.revision,
              replace: records.map(storedRecord),
            });
          } catch (e) {
            if (isSessionKitError(e, 'conflict')) throw new StaleView(sessionId);
            throw e;
          }
          return before.size - records.filter((r) => r.k === 'c').length;
        }),
      );
    }
    return dropped;
  }

  /**
   * Deletes every thread but the newest `keep` (by the root namespace's last write), each
   * with all its namespaces; returns how many threads were deleted. Reads summaries to
   * choose. Throws `RangeError` unless `keep` is an integer ≥ 0.
   */
  async pruneThreads(keep: number): Promise<number> {
    if (!Number.isInteger(keep) || keep < 0)
      throw new RangeError('[sessionkit/langgraph] pruneThreads: keep must be an integer ≥ 0');
    return this.#sessions.pruneThreads(keep);
  }

  /** Closes the store when the saver opened it (`fromUrl`); a borrowed one stays open. */
  async close(): Promise<void> {
    if (this.#ownsStore) await this.store.close();
  }

  async #listOne(
    address: SessionAddress,
    q: {
      remaining: number;
      beforeId: string | undefined;
      only: string | undefined;
      filter: Record<string, unknown> | undefined;
    },
  ): Promise<CheckpointTuple[]> {
    const view = await ThreadView.open(
      this.store,
      this.#sessions.sessionId(address.threadId, address.namespace),
    );
    if (view === undefined) return [];
    const tuples: CheckpointTuple[] = [];
    const records =
      q.only === undefined
        ? view.descending(q.beforeId)
        : singleRecord(await view.findCheckpoint(q.only), q.beforeId);
    for await (const record of records) {
      if (q.filter !== undefined) {
        const metadata = (await loadValue(this.serde, record.md)) as Record<string, unknown>;
        if (!Object.entries(q.filter).every(([k, v]) => jsonEqual(metadata?.[k], v))) continue;
      }
      tuples.push(await this.#tuple(view, record, address));
      if (tuples.length >= q.remaining) break;
    }
    return tuples;
  }

  async #tuple(
    view: ThreadView,
    record: CheckpointRecord,
    address: SessionAddress,
  ): Promise<CheckpointTuple> {
    // Looked up once per channel: checking a remembered value reads each of its items.
    const refs = Object.entries(record.r);
    const remembered = refs.map(([channel, [, p]]) => this.#arrays.remembered(view, channel, p));
    await view.prefetch(refs.filter((_, i) => remembered[i] === undefined).map(([, [, p]]) => p));
    const checkpoint = (await loadValue(this.serde, record.cp)) as Checkpoint;
    const values: Record<string, unknown> = {};
    for (const [i, [channel, [, p]]] of refs.entries()) {
      const known = remembered[i];
      if (known !== undefined) {
        values[channel] = known;
        continue;
      }
      const decoded = await this.#arrays.decode(view, channel, p);
      if (decoded === undefined) continue;
      values[channel] = await loadValue(this.serde, decoded.stored);
      this.#arrays.read(view, channel, p, values[channel], decoded.start);
    }
    checkpoint.channel_values = values;
    if (checkpoint.v < 4 && record.parent !== undefined)
      await this.#migratePendingSends(view, checkpoint, record.parent);
    const writes = await view.writesOf(record);
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      writes.map(
        async (w) =>
          [w.task, w.channel, await loadValue(this.serde, w.value)] as CheckpointPendingWrite,
      ),
    );
    const configurable = { thread_id: address.threadId, checkpoint_ns: address.namespace };
    const tuple: CheckpointTuple = {
      config: { configurable: { ...configurable, checkpoint_id: record.id } },
      checkpoint,
      metadata: (await loadValue(this.serde, record.md)) as CheckpointMetadata,
      pendingWrites,
    };
    if (record.parent !== undefined)
      tuple.parentConfig = { configurable: { ...configurable, checkpoint_id: record.parent } };
    return tuple;
  }

  /** The channel refs of checkpoint `parent` (none without one, `{}` when it is not found). */
  async #parentRefs(
    view: ThreadView,
    parent: string | undefined,
  ): Promise<Record<string, Ref> | undefined> {
    if (parent === undefined) return undefined;
    if (parent === view.head.cp) return view.head.lr;
    return (await view.findCheckpoint(parent))?.r ?? {};
  }

  /** Checkpoints before format 4 kept pending sends as the parent's TASKS writes. */
  async #migratePendingSends(
    view: ThreadView,
    checkpoint: Checkpoint,
    parentId: string,
  ): Promise<void> {
    const parent = await view.findCheckpoint(parentId);
    const writes = parent === undefined ? [] : await view.writesOf(parent);
    const sends = await Promise.all(
      writes.filter((w) => w.channel === TASKS).map((w) => loadValue(this.serde, w.value)),
    );
    const values = checkpoint.channel_values as Record<string, unknown>;
    const versions = checkpoint.channel_versions as Record<string, number | string>;
    values[TASKS] = sends;
    const existing = Object.values(versions);
    versions[TASKS] =
      existing.length > 0 ? maxChannelVersion(...existing) : this.getNextVersion(undefined);
  }

  /**
   * Appends the record `build` makes from the session's current view, in one commit that
   * expects the view's revision; on `conflict` (another writer got there first) or a
   * rewritten history, reads again and retries. Creates the session on first use.
   */
  async #append(
    address: SessionAddress,
    build: (view: ThreadView) => Promise<ThreadRecord>,
    landed: (view: ThreadView, record: ThreadRecord) => void = () => {},
  ): Promise<void> {
    const sessionId = this.#sessions.sessionId(address.threadId, address.namespace);
    await this.#locked(sessionId, () =>
      this.#retrying(async () => {
        const view = await ThreadView.open(this.store, sessionId);
        if (view === undefined) {
          await this.#sessions.ensure(address);
          throw new StaleView(sessionId);
        }
        const record = await build(view);
        try {
          await this.store.commit(sessionId, {
            expectedRevision: view.revision,
            append: [storedRecord(record)],
          });
        } catch (e) {
          if (isSessionKitError(e, 'conflict') || isSessionKitError(e, 'not_found'))
            throw new StaleView(sessionId);
          throw e;
        }
        landed(view, record);
      }),
    );
  }

  /** Runs `fn` after the calls before it on the same session in this saver (no self-conflicts). */
  async #locked<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(sessionId) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const settled = run.catch(() => {});
    this.#locks.set(sessionId, settled);
    try {
      return await run;
    } finally {
      if (this.#locks.get(sessionId) === settled) this.#locks.delete(sessionId);
    }
  }

  /** Runs `fn` again (with a growing random pause) while it throws `StaleView`. */
  async #retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof StaleView) || attempt >= MAX_ATTEMPTS) throw e;
        if (attempt > 1) await sleep(Math.random() * Math.min(50, 2 ** attempt));
      }
    }
  }
}
