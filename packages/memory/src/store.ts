// The reference store: the kit's base class over a MemoryBackend. Every primitive reads
// and writes the backend in one synchronous step, so each call is atomic.
import type {
  CommitInput,
  CommitResult,
  FullStore,
  JsonValue,
  Message,
  MessageWindow,
  RepairReport,
  RouterRow,
  Session,
  SessionEvent,
  SessionSummary,
} from '@sessionkit/core';
import {
  BaseStore,
  type NormalizedListOptions,
  type NormalizedMessageWindow,
  planCreate,
  planEvent,
  pruneVictims,
  readLineage,
  type StoredRoute,
  windowBounds,
} from '@sessionkit/core/adapter';
import { bindingKey, insertNewRecord, MemoryBackend } from './backend.js';
import { errors, getRecord, sessionOf, summaryOf } from './codec.js';
import { commitRecord, saveRecord } from './commit.js';
import { rebuildIndex } from './repair.js';
import { bindRoute, followRoute, readRoute, recentRoutes, touchRoute } from './router.js';
import { branchRecord, cloneRecord, mergeRecord, removeSession } from './tree.js';

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
 * Nothing is durable: the data lives as long as its `MemoryBackend`. Each primitive reads
 * and writes the backend in one synchronous step, so every call is atomic with respect to
 * every other call in the process; the base class copies what goes in and what comes out.
 * A session whose record was damaged through the backend is `corrupt` (`delete` still
 * removes it; `repair()` reports it).
 */
export class MemoryStore<M = Message> extends BaseStore<M> implements FullStore<M> {
  /** The data this store works on (shared with other stores on the same backend). */
  readonly backend: MemoryBackend;

  /** A store over `options.backend`, or over a new private backend. Throws `invalid_argument`. */
  constructor(options: MemoryStoreOptions = {}) {
    super({ errors, results: 'shared' });
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

  protected override async insertSession(session: Session<M>): Promise<Session<M>> {
    const b = this.backend;
    if (b.records.has(session.id)) throw errors.exists(session.id);
    // Stryker disable next-line ConditionalExpression: equivalent — no record is stored under an undefined key.
    const parent = session.parentId === undefined ? undefined : b.records.get(session.parentId);
    const { state, messages } = planCreate(
      session as Session<unknown>,
      parent ? readLineage(parent.lineage) : undefined,
    );
    return sessionOf(b, insertNewRecord(b, state.header, messages, state.lineage));
  }

  protected override async readSession(id: string): Promise<Session<M>> {
    const record = getRecord(this.backend, id);
    this.backend.stats.messageBodyReads++;
    return sessionOf(this.backend, record);
  }

  protected override async replaceSession(session: Session<M>): Promise<Session<M>> {
    return sessionOf(this.backend, saveRecord(this.backend, session as Session<unknown>));
  }

  protected override async removeSession(id: string): Promise<boolean> {
    return removeSession(this.backend, id);
  }

  protected override async listSummaries(opts: NormalizedListOptions): Promise<SessionSummary[]> {
    return this.backend.index.page(opts).map((e) => summaryOf(this.backend, e));
  }

  protected override async writeCommit(id: string, input: CommitInput<M>): Promise<CommitResult> {
    return commitRecord(this.backend, id, input as CommitInput<unknown>);
  }

  protected override async writeBranch(parentId: string, atTurn: number): Promise<Session<M>> {
    return sessionOf(this.backend, branchRecord(this.backend, parentId, atTurn));
  }

  protected override async writeClone(id: string): Promise<Session<M>> {
    return sessionOf(this.backend, cloneRecord(this.backend, id));
  }

  protected override async writeMerge(childId: string): Promise<Session<M>> {
    return sessionOf(this.backend, mergeRecord(this.backend, childId));
  }

  protected override async readWindow(
    id: string,
    window: NormalizedMessageWindow,
  ): Promise<MessageWindow<M>> {
    const record = getRecord(this.backend, id);
    this.backend.stats.messageBodyReads++;
    const { start, end } = windowBounds(window, record.messages.length);
    return {
      messages: record.messages.slice(start, end) as M[],
      offset: start,
      messageCount: record.messages.length,
      revision: record.header.revision,
    };
  }

  protected override async writeRuntimeStatus(id: string, json: string): Promise<void> {
    getRecord(this.backend, id).runtimeStatus = json;
  }

  protected override async readRuntimeStatus(id: string): Promise<string | null> {
    return getRecord(this.backend, id).runtimeStatus;
  }

  protected override async writeBinding(
    channel: string,
    chatKey: string,
    thread: string,
    sessionId: string,
  ): Promise<void> {
    getRecord(this.backend, sessionId);
    bindRoute(this.backend, channel, chatKey, thread, sessionId);
  }

  protected override async readRoute(channel: string, chatKey: string, thread: string) {
    return readRoute(this.backend, channel, chatKey, thread) satisfies StoredRoute;
  }

  protected override async removeBinding(channel: string, chatKey: string, thread: string) {
    this.backend.bindings.delete(bindingKey(channel, chatKey, thread));
  }

  protected override async writeFollow(channel: string, chatKey: string, target: string) {
    followRoute(this.backend, channel, chatKey, target);
  }

  protected override async touchBinding(channel: string, chatKey: string, thread: string) {
    touchRoute(this.backend, channel, chatKey, thread);
  }

  protected override async readRecentBindings(limit: number): Promise<RouterRow[]> {
    return recentRoutes(this.backend, limit);
  }

  protected override async appendEvent(
    id: string,
    type: string,
    payload: JsonValue,
  ): Promise<SessionEvent> {
    const record = getRecord(this.backend, id);
    const last = record.events[record.events.length - 1];
    const event = planEvent(record.header.revision, last?.sequence ?? 0, type, payload);
    record.events.push(event);
    return event;
  }

  protected override async readEvents(id: string, after: number, limit: number | undefined) {
    const hits = getRecord(this.backend, id).events.filter((e) => e.sequence > after);
    return hits.slice(0, limit); // slice(0, undefined) keeps them all
  }

  protected override async pruneRoots(max: number): Promise<number> {
    // The roots come in listing order from the index (no scan of the sub-sessions).
    let deleted = 0;
    for (const { id } of pruneVictims(this.backend.index.roots(), max))
      if (removeSession(this.backend, id)) deleted++;
    return deleted;
  }

  protected override async repairStore(): Promise<RepairReport> {
    return rebuildIndex(this.backend);
  }
}
