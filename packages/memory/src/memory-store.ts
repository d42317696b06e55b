import type {
  CommitInput,
  CommitResult,
  EventQuery,
  FullStore,
  JsonValue,
  ListOptions,
  Message,
  MessageWindow,
  MessageWindowQuery,
  RepairReport,
  RouterRow,
  Session,
  SessionEvent,
  SessionInput,
  SessionSummary,
} from '@sessionkit/core';
import { newSessionId } from '@sessionkit/core';
import {
  applyCommitToSummary,
  assertBranchPoint,
  assertCommitInput,
  assertCount,
  assertEventType,
  assertFollowArgs,
  assertId,
  assertJsonValue,
  assertLiveSessionId,
  assertMax,
  assertRouterTuple,
  assertSaveInput,
  branchedLineage,
  branchHeader,
  checkCommitExpectations,
  cloneHeader,
  cloneJson,
  committedLineage,
  compareListOrder,
  compareRouterRows,
  createdLineage,
  errorsFor,
  extendsHistory,
  nextUpdatedAt,
  normalizeEventQuery,
  normalizeLimit,
  normalizeListOptions,
  normalizeMessageWindow,
  parentToMergeInto,
  planMerge,
  prepareCreate,
  readLineage,
  resolveRoute,
  rootLineage,
  runtimeStatusText,
  savedHeader,
  savedLineage,
  searchTextOf,
  selectPage,
  windowBounds,
} from '@sessionkit/core/adapter';
import {
  bindingKey,
  childIds,
  followKey,
  type IndexEntry,
  insertNewRecord,
  MemoryBackend,
  type MemoryHeader,
  type MemoryRecord,
  putRecord,
} from './memory-backend.js';
import { recordProblem } from './record-check.js';
import { removeSession } from './remove.js';
import { rebuildIndex } from './repair.js';

const errors = errorsFor('memory');

/** Options of `new MemoryStore(options)`. */
export interface MemoryStoreOptions {
  /**
   * The data to work on. Stores given the same backend see the same sessions (how tests get
   * "a second store instance"). Default: a new, private backend.
   */
  backend?: MemoryBackend | undefined;
}

/**
 * The in-process reference store: every sessionkit capability, held in process memory.
 * Nothing is durable: the data lives as long as its `MemoryBackend`.
 *
 * Every operation validates its arguments first (`invalid_argument`, nothing changed) and
 * then reads and writes the backend in one synchronous step, so each operation is atomic
 * with respect to every other operation in the process. Values handed in are deep-copied
 * before they are stored; values handed out are fresh deep copies owned by the caller.
 * A method that uses a session whose record was damaged directly through the backend
 * throws `corrupt` (`delete` still removes it; `repair()` reports it).
 */
export class MemoryStore<M = Message> implements FullStore<M> {
  /** The data this store works on (shared with other stores on the same backend). */
  readonly backend: MemoryBackend;
  #closed = false;

  /** A store over `options.backend`, or over a new private backend. */
  constructor(options: MemoryStoreOptions = {}) {
    // Stryker disable all: constructor argument checks are outside every conformance suite (it gets its stores from an initializer); packages/memory/test covers them.
    if (typeof options !== 'object' || options === null) {
      throw errors.invalid('MemoryStore: options must be an object');
    }
    const backend = options.backend ?? new MemoryBackend();
    if (!(backend instanceof MemoryBackend)) {
      throw errors.invalid('MemoryStore: options.backend must be a MemoryBackend');
    }
    // Stryker restore all
    this.backend = backend;
  }

  // ---------------------------------------------------------------- Store

  /**
   * Stores a new session at revision 1 and returns it. Defaults as in core's `prepareCreate`;
   * given `createdAt`/`updatedAt` and `parentId` are kept as given (the parent need not
   * exist). Throws `exists`, `invalid_argument`, `closed`.
   */
  async create(session: SessionInput<M>): Promise<Session<M>> {
    this.#assertOpen();
    const prepared = prepareCreate(errors, session as SessionInput<unknown>);
    const b = this.backend;
    if (b.records.has(prepared.id)) throw errors.exists(prepared.id);
    const { messages, children: _children, ...header } = prepared;
    // Stryker disable next-line ConditionalExpression: equivalent — no record is stored under an undefined key.
    const parent = header.parentId === undefined ? undefined : b.records.get(header.parentId);
    const lineage = createdLineage(header, parent ? readLineage(parent.lineage) : undefined);
    const record = insertNewRecord(b, header, messages, lineage);
    return this.#sessionOf(record);
  }

  /**
   * The full session with messages and children, caller-owned.
   * Throws `not_found`, `corrupt`, `invalid_argument`, `closed`.
   */
  async load(id: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, id);
    const record = this.#get(id);
    this.backend.stats.messageBodyReads++;
    return this.#sessionOf(record);
  }

  /**
   * Replaces title, folder, model, provider, counters, metadata, status, messages,
   * archivedAt, mode and state (absent optional fields are cleared, absent counters are
   * 0). `children`, `parentId`, `branchedAtTurn` and `createdAt` are kept from the stored
   * session. `session.revision` must equal the stored revision. The result has
   * `revision + 1` and an `updatedAt` strictly after the stored one; the argument is never
   * mutated. Throws `not_found`, `conflict`, `invalid_argument`, `closed`.
   */
  async save(session: Session<M>): Promise<Session<M>> {
    this.#assertOpen();
    assertSaveInput(errors, session);
    const record = this.#get(session.id);
    const stored = record.header;
    if (session.revision !== stored.revision) {
      throw errors.conflict(session.id, session.revision, stored.revision);
    }
    const header: MemoryHeader = savedHeader(stored, session as Session<unknown>);
    const messages = cloneJson(session.messages) as unknown[];
    record.lineage = savedLineage(
      readLineage(record.lineage),
      extendsHistory(record.messages, messages),
    );
    record.header = header;
    record.messages = messages;
    record.searchText = searchTextOf(messages);
    putRecord(this.backend, record);
    return this.#sessionOf(record);
  }

  /**
   * Removes the session with its messages, runtime status, events, the router bindings
   * that point at it and the follow targets that pin it. Its children are promoted to its
   * parent (or become roots); their revision and `updatedAt` do not change.
   * Throws `not_found`, `invalid_argument`, `closed`.
   */
  async delete(id: string): Promise<void> {
    this.#assertOpen();
    assertId(errors, id);
    // A corrupt session can still be deleted: that is how an operator gets rid of it.
    if (!this.backend.records.has(id)) throw errors.notFound(id);
    this.#remove(id);
  }

  /**
   * Summaries from the index only (message bodies are never read), filtered, ordered and
   * paged as `ListOptions` describes. Throws `invalid_argument`, `closed`.
   */
  async list(options?: ListOptions): Promise<SessionSummary[]> {
    this.#assertOpen();
    const opts = normalizeListOptions(errors, options);
    const page = selectPage(this.backend.index.values(), opts);
    return page.map((entry) => this.#summaryOf(entry));
  }

  /**
   * Marks this store closed: every later call fails with `closed`. Idempotent. The backend
   * and other stores on it are unaffected.
   */
  async close(): Promise<void> {
    this.#closed = true;
  }

  // ---------------------------------------------------------------- Committer

  /**
   * Appends (or replaces) messages and applies the patch and increments in one atomic
   * step. Appending copies only the new messages, so its cost does not grow with the
   * stored history. Expectations that do not hold → `conflict`, nothing written.
   * Throws `not_found`, `conflict`, `invalid_argument`, `closed`.
   */
  async commit(id: string, input: CommitInput<M>): Promise<CommitResult> {
    this.#assertOpen();
    assertId(errors, id);
    assertCommitInput(errors, id, input);
    const record = this.#get(id);
    const messageCount = record.messages.length;
    checkCommitExpectations(errors, id, { revision: record.header.revision, messageCount }, input);
    const now = nextUpdatedAt(record.header.updatedAt);
    const { messageCount: nextCount, ...header } = applyCommitToSummary(
      { ...record.header, messageCount },
      input as CommitInput<unknown>,
      now,
      errors,
    );
    record.lineage = committedLineage(readLineage(record.lineage), input);
    if (input.replace !== undefined) {
      const messages = cloneJson(input.replace) as unknown[];
      record.messages = messages;
      record.searchText = searchTextOf(messages);
    } else if (input.append !== undefined) {
      const added = cloneJson(input.append) as unknown[];
      // Push one by one: no copy of the stored array, no argument-count limit.
      for (const message of added) record.messages.push(message);
      record.searchText += searchTextOf(added);
    }
    record.header = header;
    putRecord(this.backend, record);
    return { revision: header.revision, messageCount: nextCount, updatedAt: new Date(now) };
  }

  // ---------------------------------------------------------------- Brancher

  /**
   * A new session (fresh id, revision 1) holding copies of the parent's first `atTurn`
   * messages, with the parent's title, folder, model, provider, mode and counters,
   * `metadata` = the parent's plus `branchedFrom`, `parentId` and `branchedAtTurn` set.
   * The parent itself is not written (its `children` are derived). Throws `not_found`,
   * `invalid_argument` (atTurn outside `0..messageCount`), `closed`.
   */
  async branch(parentId: string, atTurn: number): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, parentId);
    assertCount(errors, atTurn, 'branch: atTurn');
    const parent = this.#get(parentId);
    assertBranchPoint(errors, parentId, atTurn, parent.messages.length);
    this.backend.stats.messageBodyReads++;
    const messages = structuredClone(parent.messages.slice(0, atTurn));
    const header: MemoryHeader = branchHeader(parent.header, this.#freshId(), atTurn);
    const lineage = branchedLineage(parent.header, readLineage(parent.lineage));
    const record = insertNewRecord(this.backend, header, messages, lineage);
    return this.#sessionOf(record);
  }

  /**
   * An independent copy (fresh id, revision 1, no parent, not archived) with the full
   * history, counters, state and fields, `metadata.clonedFrom = id`.
   * Throws `not_found`, `invalid_argument`, `closed`.
   */
  async clone(id: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, id);
    const source = this.#get(id);
    this.backend.stats.messageBodyReads++;
    const header: MemoryHeader = cloneHeader(source.header, this.#freshId());
    const messages = structuredClone(source.messages);
    // The copy's text is the source's: no need to lower-case the whole history again.
    const record = insertNewRecord(
      this.backend,
      header,
      messages,
      rootLineage(),
      source.searchText,
    );
    return this.#sessionOf(record);
  }

  /**
   * Fast-forwards the parent to copies of the child's messages (core's `planMerge`: the
   * parent keeps its own fields and counters plus what the branch gained, `revision + 1`,
   * `updatedAt` moved forward) and returns the parent. The child is unchanged.
   * Throws `merge_diverged` (nothing written) when the parent's history changed after the
   * branch point (more or fewer messages than `branchedAtTurn`, or rewritten since the
   * branch), `invalid_argument` when the child has no parent, `not_found`, `closed`.
   */
  async merge(childId: string): Promise<Session<M>> {
    this.#assertOpen();
    assertId(errors, childId);
    const child = this.#get(childId);
    const parent = this.#get(parentToMergeInto(errors, child.header));
    const plan = planMerge(
      errors,
      {
        header: parent.header,
        lineage: readLineage(parent.lineage),
        messageCount: parent.messages.length,
      },
      { header: child.header, lineage: readLineage(child.lineage) },
    );
    this.backend.stats.messageBodyReads++;
    parent.header = plan.header;
    parent.lineage = plan.lineage;
    parent.messages = structuredClone(child.messages);
    parent.searchText = child.searchText;
    putRecord(this.backend, parent);
    return this.#sessionOf(parent);
  }

  // ---------------------------------------------------------------- HistoryReader

  /**
   * A caller-owned copy of the committed messages, or of a window of them (`{last}`,
   * `{offset, limit}`), taken in one synchronous step (never torn by a concurrent
   * commit). A window copies only its own messages. Throws `not_found`,
   * `invalid_argument`, `closed`.
   */
  async loadMessages(id: string, window?: MessageWindowQuery): Promise<M[]> {
    return (await this.loadMessageWindow(id, window)).messages;
  }

  /**
   * The window with its absolute `offset`, the history's `messageCount` and the
   * session's `revision`, from one synchronous step. Throws `not_found`,
   * `invalid_argument`, `closed`.
   */
  async loadMessageWindow(id: string, window?: MessageWindowQuery): Promise<MessageWindow<M>> {
    this.#assertOpen();
    assertId(errors, id);
    const normalized = normalizeMessageWindow(errors, window);
    const record = this.#get(id);
    this.backend.stats.messageBodyReads++;
    const { start, end } = windowBounds(normalized, record.messages.length);
    return {
      messages: structuredClone(record.messages.slice(start, end)) as M[],
      offset: start,
      messageCount: record.messages.length,
      revision: record.header.revision,
    };
  }

  // ---------------------------------------------------------------- RuntimeStatusStore

  /**
   * Stores `status` (any JSON) apart from the transcript. Over `MAX_RUNTIME_STATUS_BYTES`
   * of UTF-8 JSON → `too_large`, nothing written. Throws `not_found`, `invalid_argument`,
   * `closed`.
   */
  async saveRuntimeStatus(id: string, status: JsonValue): Promise<void> {
    this.#assertOpen();
    const text = runtimeStatusText(errors, id, status);
    this.#get(id).runtimeStatus = text;
  }

  /** The stored runtime status (a fresh value), or `null` when none was saved. Throws `not_found`. */
  async loadRuntimeStatus(id: string): Promise<JsonValue | null> {
    this.#assertOpen();
    assertId(errors, id);
    const text = this.#get(id).runtimeStatus;
    // Stryker disable next-line ConditionalExpression: equivalent — JSON.parse(null) is null.
    return text === null ? null : (JSON.parse(text) as JsonValue);
  }

  // ---------------------------------------------------------------- SessionRouter

  /**
   * Binds `(channel, chatKey, thread)` to an existing session, replacing any binding.
   * `channel` and `chatKey` must be non-empty; `thread` may be `""`.
   * Throws `not_found`, `invalid_argument`, `closed`.
   */
  async bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'bind', channel, chatKey, thread, true);
    assertId(errors, sessionId);
    this.#get(sessionId);
    this.backend.bindings.set(bindingKey(channel, chatKey, thread), {
      sessionId,
      channel,
      chatKey,
      thread,
      updatedAt: this.#routerNow(),
    });
  }

  /**
   * The session for the tuple, or `""`. A follow target of `(channel, chatKey)` wins:
   * `"tui"` gives `liveSessionId` (or the binding when `liveSessionId` is `""`), any other
   * target gives that id. Throws `invalid_argument`, `closed`.
   */
  async resolve(
    channel: string,
    chatKey: string,
    thread: string,
    liveSessionId: string,
  ): Promise<string> {
    this.#assertOpen();
    assertRouterTuple(errors, 'resolve', channel, chatKey, thread);
    assertLiveSessionId(errors, liveSessionId);
    return resolveRoute(
      this.backend.follows.get(followKey(channel, chatKey))?.target,
      liveSessionId,
      this.backend.bindings.get(bindingKey(channel, chatKey, thread))?.sessionId,
    );
  }

  /** Removes the binding; a missing one is not an error. Throws `invalid_argument`, `closed`. */
  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'unbind', channel, chatKey, thread);
    this.backend.bindings.delete(bindingKey(channel, chatKey, thread));
  }

  /**
   * Sets the follow target of `(channel, chatKey)`: `"tui"`, a session id (checked for
   * format only, the session need not exist), or `""` to clear.
   * Empty channel → `invalid_argument`. Throws `closed`.
   */
  async follow(channel: string, chatKey: string, target: string): Promise<void> {
    this.#assertOpen();
    assertFollowArgs(errors, channel, chatKey, target);
    const key = followKey(channel, chatKey);
    // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent — resolveRoute treats a "" target as none, and targets are only observable through resolve.
    if (target === '') this.backend.follows.delete(key);
    else this.backend.follows.set(key, { channel, chatKey, target });
  }

  /**
   * Moves the binding's `updatedAt` strictly forward; a missing binding is not an error.
   * Throws `invalid_argument`, `closed`.
   */
  async touch(channel: string, chatKey: string, thread: string): Promise<void> {
    this.#assertOpen();
    assertRouterTuple(errors, 'touch', channel, chatKey, thread);
    const binding = this.backend.bindings.get(bindingKey(channel, chatKey, thread));
    if (binding) binding.updatedAt = this.#routerNow();
  }

  /**
   * Bindings, newest `updatedAt` first. `limit`: absent or 0 → 50, at most 1000.
   * Throws `invalid_argument`, `closed`.
   */
  async recent(limit?: number): Promise<RouterRow[]> {
    this.#assertOpen();
    const n = normalizeLimit(errors, limit, 'recent: limit');
    return [...this.backend.bindings.values()]
      .sort(compareRouterRows)
      .slice(0, n)
      .map((row) => ({ ...row, updatedAt: new Date(row.updatedAt.getTime()) }));
  }

  // ---------------------------------------------------------------- EventLog

  /**
   * Appends an event with the next sequence (1, 2, 3 … without gaps), the session's
   * current revision and `at` = now. `payload` defaults to `null`. The session itself is
   * not changed. Throws `not_found`, `invalid_argument`, `closed`.
   */
  async append(id: string, type: string, payload: JsonValue = null): Promise<SessionEvent> {
    this.#assertOpen();
    assertId(errors, id);
    assertEventType(errors, type);
    assertJsonValue(errors, payload, 'event payload');
    const record = this.#get(id);
    const last = record.events[record.events.length - 1];
    const event: SessionEvent = {
      sequence: (last?.sequence ?? 0) + 1,
      revision: record.header.revision,
      at: new Date(),
      type,
      payload: cloneJson(payload),
    };
    record.events.push(event);
    return structuredClone(event);
  }

  /**
   * Events with a sequence after `query.afterSequence` (default 0), in order, at most
   * `query.limit` (default all). Throws `not_found`, `invalid_argument`, `closed`.
   */
  async events(id: string, query?: EventQuery): Promise<SessionEvent[]> {
    this.#assertOpen();
    assertId(errors, id);
    const { afterSequence, limit } = normalizeEventQuery(errors, query);
    const record = this.#get(id);
    const hits = record.events.filter((e) => e.sequence > afterSequence);
    return structuredClone(hits.slice(0, limit)); // slice(0, undefined) keeps them all
  }

  // ---------------------------------------------------------------- Pruner

  /**
   * Keeps the newest `max` root sessions (ordered like `list`: `updatedAt` desc, then id
   * desc, archived included) and deletes the other roots with the normal delete semantics,
   * in one atomic step. Sub-sessions are never selected (children promoted by this pass
   * are not either). `max <= 0` means unlimited. Returns how many were deleted.
   * Throws `invalid_argument`, `closed`.
   */
  async enforceMax(max: number): Promise<number> {
    this.#assertOpen();
    assertMax(errors, max);
    if (max <= 0) return 0;
    const roots: IndexEntry[] = [];
    for (const entry of this.backend.index.values()) {
      if (entry.parentId === undefined) roots.push(entry);
    }
    roots.sort((a, b) => compareListOrder(a, b, false));
    let deleted = 0;
    for (const entry of roots.slice(max)) if (this.#remove(entry.id)) deleted++;
    return deleted;
  }

  // ---------------------------------------------------------------- Repairer

  /**
   * Rebuilds `index` and `childrenOf` from `records`. `rebuilt` is the number of records
   * indexed; records whose header is invalid are reported in `skippedCorrupt` and left out
   * of the index (their data is left as it is); `indexEntriesFixed` counts index entries
   * and tree entries that were added, corrected or removed. Throws `closed`.
   */
  async repair(): Promise<RepairReport> {
    this.#assertOpen();
    return rebuildIndex(this.backend);
  }

  // ---------------------------------------------------------------- internals

  #assertOpen(): void {
    if (this.#closed) throw errors.closed();
  }

  /** The record of `id`; `not_found` when missing, `corrupt` when it cannot be used. */
  #get(id: string): MemoryRecord {
    // has(): a record damaged into null or undefined is corrupt, not missing.
    if (!this.backend.records.has(id)) throw errors.notFound(id);
    const record = this.backend.records.get(id) as MemoryRecord;
    const problem = recordProblem(id, record);
    if (problem !== undefined) throw errors.corrupt(id, problem);
    return record;
  }

  #freshId(): string {
    let id = newSessionId();
    // Stryker disable next-line ConditionalExpression: a fresh time-sortable random id never collides in practice; the loop is a guard no test can reach.
    while (this.backend.records.has(id)) id = newSessionId();
    return id;
  }

  #routerNow(): Date {
    const at = nextUpdatedAt(this.backend.lastRouterUpdate);
    this.backend.lastRouterUpdate = at;
    return new Date(at.getTime());
  }

  /** A caller-owned full session from a record. */
  #sessionOf(record: MemoryRecord): Session<M> {
    return {
      ...structuredClone(record.header),
      messages: structuredClone(record.messages) as M[],
      children: childIds(this.backend, record.header.id),
    };
  }

  /** A caller-owned summary from an index entry. */
  #summaryOf(entry: IndexEntry): SessionSummary {
    const { searchText: _searchText, ...rest } = entry;
    return { ...structuredClone(rest), children: childIds(this.backend, entry.id) };
  }

  /** Deletes a session with the full delete semantics; false when it does not exist. */
  #remove(id: string): boolean {
    return removeSession(this.backend, id);
  }
}
