// The store surface written once. An adapter extends `BaseStore` and implements the
// protected primitives of the capabilities its backend keeps; everything the contract
// says about a call before and after the backend is reached lives here.

import {
  assertFollowArgs,
  assertLiveSessionId,
  assertRouterTuple,
  resolveRoute,
  runtimeStatusText,
} from '../adapter-rules.js';
import type { Store } from '../contracts.js';
import { type ErrorFactory, isSessionKitError, type SessionKitError } from '../errors.js';
import { normalizeCallOptions, throwIfAborted } from '../input/call-options.js';
import { normalizeCommitInput } from '../input/commit-input.js';
import { prepareCreate } from '../input/create-input.js';
import { copyJson } from '../input/json-value-copy.js';
import {
  type NormalizedListOptions,
  normalizeEventQuery,
  normalizeListOptions,
} from '../input/list-input.js';
import { normalizeSaveInput } from '../input/save-input.js';
import { type NormalizedMessageWindow, normalizeMessageWindow } from '../message-window.js';
import type { StoreMethodName } from '../store-methods.js';
import type {
  CallOptions,
  CommitInput,
  CommitResult,
  EventQuery,
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
} from '../types.js';
import { assertCount, assertEventType, assertId, assertMax, normalizeLimit } from '../validate.js';
import { hideAbsentCapabilities } from './capabilities.js';

/** The public operations of a store, as errors and hooks name them (all but `close`). */
export type StoreOperation = Exclude<StoreMethodName, 'close'>;

/** What a router tuple resolves to in storage: its follow target and its binding. */
export interface StoredRoute {
  /** The follow target of `(channel, chatKey)`: `"tui"` or a session id; absent when none. */
  followTarget?: string | undefined;
  /** The session bound to the tuple; absent when none. */
  sessionId?: string | undefined;
}

/** Options of `BaseStore`'s constructor. */
export interface BaseStoreOptions {
  /** The adapter's errors (`errorsFor('name')`): every message names the adapter. */
  errors: ErrorFactory;
  /**
   * `"fresh"` (default): the primitives return values nothing else holds (parsed from
   * storage), handed to the caller as they are. `"shared"`: they may return the backend's
   * own objects, and the base class gives the caller deep copies.
   */
  results?: 'fresh' | 'shared' | undefined;
}

/**
 * The base class of a sessionkit store. It implements the whole public surface of `Store`
 * and every optional capability — the words of each method are the contract's in
 * `contracts.ts` — once for every adapter: the closed check, the validation and
 * normalisation of every argument (before any I/O; each argument read once and copied, so
 * the primitive works on exactly what was checked), the trailing `{ signal }`, readiness
 * (`prepare()` once, again after a failure), the mapping of backend failures
 * (`toStoreError`), and caller-owned results.
 *
 * An adapter implements the protected primitives, which receive validated copies. A
 * capability whose primitives an adapter leaves out is absent: its public methods read as
 * `undefined` on the instance, so its guard (`isCommitter`, …) is false. A capability with
 * only some of its primitives is a programming error, reported at construction.
 *
 * Signals: an aborted signal rejects with `aborted` before any I/O. A read whose signal
 * fires while it runs rejects with `aborted` at once (what it was reading is dropped). A
 * write's primitive gets the signal and must check it (`throwIfAborted`) before its atomic
 * step and never after: a write either lands whole or writes nothing, and the base class
 * waits for its outcome.
 */
export abstract class BaseStore<M = Message> implements Store<M> {
  /** This adapter's errors. */
  protected readonly errors: ErrorFactory;
  readonly #copyResults: boolean;
  #closed = false;
  #ready: Promise<void> | undefined;
  #isReady = false;

  protected constructor(options: BaseStoreOptions) {
    this.errors = options.errors;
    this.#copyResults = options.results === 'shared';
    hideAbsentCapabilities(this, BaseStore.prototype, this.errors);
  }

  /** True once `close()` was called. */
  protected get isClosed(): boolean {
    return this.#closed;
  }

  // ------------------------------------------------------------------ hooks

  /**
   * Makes the backend ready (create folders, run migrations, check the server); called
   * before the first call that reaches the backend, once — again after a failure. Default:
   * nothing to do.
   */
  protected prepare(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * The `SessionKitError` for a failure of `operation` that is not one already (a driver
   * or file-system error). Default: `unavailable` with the error as its `cause`. Override
   * to map your backend's errors (never put credentials in the message).
   */
  protected toStoreError(
    error: unknown,
    operation: StoreOperation,
    sessionId?: string,
  ): SessionKitError {
    const where = sessionId === undefined ? operation : `${operation} of session "${sessionId}"`;
    return this.errors.unavailable(where, error);
  }

  /** Releases what the store owns, once, when it is closed. Default: nothing. */
  protected closeBackend(): Promise<void> {
    return Promise.resolve();
  }

  // ------------------------------------------------------------------ primitives

  /** Stores a new session (validated, defaults filled, revision 1); `exists` when taken. */
  protected abstract insertSession(session: Session<M>, signal?: AbortSignal): Promise<Session<M>>;
  /** The full session with messages and children; `not_found`. */
  protected abstract readSession(id: string, signal?: AbortSignal): Promise<Session<M>>;
  /** `save` of a validated session (its `revision` is the expected one). */
  protected abstract replaceSession(session: Session<M>, signal?: AbortSignal): Promise<Session<M>>;
  /** Deletes with the delete rules; false when there is no such session. */
  protected abstract removeSession(id: string, signal?: AbortSignal): Promise<boolean>;
  /** A page of summaries for validated list options. */
  protected abstract listSummaries(
    options: NormalizedListOptions,
    signal?: AbortSignal,
  ): Promise<SessionSummary[]>;

  /** Committer: the turn write for validated input (`planCommit` decides). */
  protected writeCommit(
    _id: string,
    _input: CommitInput<M>,
    _signal?: AbortSignal,
  ): Promise<CommitResult> {
    return this.#absent('commit');
  }
  /** Brancher: a new branch of `parentId` at `atTurn` (a count, checked against the parent here). */
  protected writeBranch(
    _parentId: string,
    _atTurn: number,
    _signal?: AbortSignal,
  ): Promise<Session<M>> {
    return this.#absent('branch');
  }
  /** Brancher: an independent copy of `id`. */
  protected writeClone(_id: string, _signal?: AbortSignal): Promise<Session<M>> {
    return this.#absent('clone');
  }
  /** Brancher: merges `childId` into its parent; returns the parent. */
  protected writeMerge(_childId: string, _signal?: AbortSignal): Promise<Session<M>> {
    return this.#absent('merge');
  }
  /** HistoryReader: a window of the history with its position, from one snapshot. */
  protected readWindow(
    _id: string,
    _window: NormalizedMessageWindow,
    _signal?: AbortSignal,
  ): Promise<MessageWindow<M>> {
    return this.#absent('loadMessages');
  }
  /** RuntimeStatusStore: stores the status's JSON text (size already checked). */
  protected writeRuntimeStatus(_id: string, _json: string, _signal?: AbortSignal): Promise<void> {
    return this.#absent('saveRuntimeStatus');
  }
  /** RuntimeStatusStore: the stored JSON text, or `null`; `not_found` for a missing session. */
  protected readRuntimeStatus(_id: string, _signal?: AbortSignal): Promise<string | null> {
    return this.#absent('loadRuntimeStatus');
  }
  /** SessionRouter: binds the tuple to an existing session (`not_found` otherwise). */
  protected writeBinding(
    _channel: string,
    _chatKey: string,
    _thread: string,
    _sessionId: string,
  ): Promise<void> {
    return this.#absent('bind');
  }
  /** SessionRouter: the follow target and binding the tuple has in storage. */
  protected readRoute(_channel: string, _chatKey: string, _thread: string): Promise<StoredRoute> {
    return this.#absent('resolve');
  }
  /** SessionRouter: removes the binding if there is one. */
  protected removeBinding(_channel: string, _chatKey: string, _thread: string): Promise<void> {
    return this.#absent('unbind');
  }
  /** SessionRouter: sets the follow target (`""` clears it). */
  protected writeFollow(_channel: string, _chatKey: string, _target: string): Promise<void> {
    return this.#absent('follow');
  }
  /** SessionRouter: moves the binding's time strictly forward if there is one. */
  protected touchBinding(_channel: string, _chatKey: string, _thread: string): Promise<void> {
    return this.#absent('touch');
  }
  /** SessionRouter: the newest `limit` bindings (`compareRouterRows` order). */
  protected readRecentBindings(_limit: number): Promise<RouterRow[]> {
    return this.#absent('recent');
  }
  /** EventLog: appends an event (payload validated and copied; `planEvent` decides). */
  protected appendEvent(
    _id: string,
    _type: string,
    _payload: JsonValue,
    _signal?: AbortSignal,
  ): Promise<SessionEvent> {
    return this.#absent('append');
  }
  /** EventLog: events after `afterSequence`, at most `limit` (all when undefined). */
  protected readEvents(
    _id: string,
    _afterSequence: number,
    _limit: number | undefined,
    _signal?: AbortSignal,
  ): Promise<SessionEvent[]> {
    return this.#absent('events');
  }
  /** Pruner: keeps the newest `max` roots (`max > 0`; `pruneVictims` decides). */
  protected pruneRoots(_max: number, _signal?: AbortSignal): Promise<number> {
    return this.#absent('enforceMax');
  }
  /** Repairer: rebuilds derived data from authoritative data. */
  protected repairStore(_signal?: AbortSignal): Promise<RepairReport> {
    return this.#absent('repair');
  }

  #absent(operation: StoreOperation): never {
    throw this.errors.invalid(`${operation} is not supported by this store`);
  }

  // ------------------------------------------------------------------ Store

  async create(session: SessionInput<M>, call?: CallOptions): Promise<Session<M>> {
    return this.#call('write', 'create', idOf(session), call, () => {
      const prepared = prepareCreate(this.errors, session);
      return (signal) => this.insertSession(prepared, signal);
    });
  }

  async load(id: string, call?: CallOptions): Promise<Session<M>> {
    return this.#call('read', 'load', id, call, () => {
      assertId(this.errors, id);
      return (signal) => this.readSession(id, signal);
    });
  }

  async save(session: Session<M>, call?: CallOptions): Promise<Session<M>> {
    return this.#call('write', 'save', idOf(session), call, () => {
      const copy = normalizeSaveInput(this.errors, session);
      return (signal) => this.replaceSession(copy, signal);
    });
  }

  async delete(id: string, call?: CallOptions): Promise<void> {
    return this.#call('write', 'delete', id, call, () => {
      assertId(this.errors, id);
      return async (signal) => {
        if (!(await this.removeSession(id, signal))) throw this.errors.notFound(id);
      };
    });
  }

  async list(options?: ListOptions, call?: CallOptions): Promise<SessionSummary[]> {
    return this.#call('read', 'list', undefined, call, () => {
      const opts = normalizeListOptions(this.errors, options);
      return (signal) => this.listSummaries(opts, signal);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.closeBackend();
  }

  // ------------------------------------------------------------------ capabilities

  async commit(id: string, input: CommitInput<M>, call?: CallOptions): Promise<CommitResult> {
    return this.#call('write', 'commit', id, call, () => {
      assertId(this.errors, id);
      const commit = normalizeCommitInput(this.errors, id, input);
      return (signal) => this.writeCommit(id, commit, signal);
    });
  }

  async branch(parentId: string, atTurn: number, call?: CallOptions): Promise<Session<M>> {
    return this.#call('write', 'branch', parentId, call, () => {
      assertId(this.errors, parentId);
      assertCount(this.errors, atTurn, 'branch: atTurn');
      return (signal) => this.writeBranch(parentId, atTurn, signal);
    });
  }

  async clone(id: string, call?: CallOptions): Promise<Session<M>> {
    return this.#call('write', 'clone', id, call, () => {
      assertId(this.errors, id);
      return (signal) => this.writeClone(id, signal);
    });
  }

  async merge(childId: string, call?: CallOptions): Promise<Session<M>> {
    return this.#call('write', 'merge', childId, call, () => {
      assertId(this.errors, childId);
      return (signal) => this.writeMerge(childId, signal);
    });
  }

  async loadMessages(id: string, window?: MessageWindowQuery, call?: CallOptions): Promise<M[]> {
    return (await this.#window('loadMessages', id, window, call)).messages;
  }

  async loadMessageWindow(
    id: string,
    window?: MessageWindowQuery,
    call?: CallOptions,
  ): Promise<MessageWindow<M>> {
    return this.#window('loadMessageWindow', id, window, call);
  }

  async saveRuntimeStatus(id: string, status: JsonValue, call?: CallOptions): Promise<void> {
    return this.#call('write', 'saveRuntimeStatus', id, call, () => {
      const json = runtimeStatusText(this.errors, id, status);
      return (signal) => this.writeRuntimeStatus(id, json, signal);
    });
  }

  async loadRuntimeStatus(id: string, call?: CallOptions): Promise<JsonValue | null> {
    const json = await this.#call('read', 'loadRuntimeStatus', id, call, () => {
      assertId(this.errors, id);
      return (signal) => this.readRuntimeStatus(id, signal);
    });
    if (json === null) return null;
    try {
      return JSON.parse(json) as JsonValue;
    } catch (cause) {
      throw this.errors.corrupt(id, 'the runtime status is not JSON', cause);
    }
  }

  async bind(channel: string, chatKey: string, thread: string, sessionId: string): Promise<void> {
    return this.#call('write', 'bind', sessionId, undefined, () => {
      assertRouterTuple(this.errors, 'bind', channel, chatKey, thread, true);
      assertId(this.errors, sessionId);
      return () => this.writeBinding(channel, chatKey, thread, sessionId);
    });
  }

  async resolve(
    channel: string,
    chatKey: string,
    thread: string,
    liveSessionId: string,
  ): Promise<string> {
    const route = await this.#call('read', 'resolve', undefined, undefined, () => {
      assertRouterTuple(this.errors, 'resolve', channel, chatKey, thread);
      assertLiveSessionId(this.errors, liveSessionId);
      return () => this.readRoute(channel, chatKey, thread);
    });
    return resolveRoute(route.followTarget, liveSessionId, route.sessionId);
  }

  async unbind(channel: string, chatKey: string, thread: string): Promise<void> {
    return this.#call('write', 'unbind', undefined, undefined, () => {
      assertRouterTuple(this.errors, 'unbind', channel, chatKey, thread);
      return () => this.removeBinding(channel, chatKey, thread);
    });
  }

  async follow(channel: string, chatKey: string, target: string): Promise<void> {
    return this.#call('write', 'follow', undefined, undefined, () => {
      assertFollowArgs(this.errors, channel, chatKey, target);
      return () => this.writeFollow(channel, chatKey, target);
    });
  }

  async touch(channel: string, chatKey: string, thread: string): Promise<void> {
    return this.#call('write', 'touch', undefined, undefined, () => {
      assertRouterTuple(this.errors, 'touch', channel, chatKey, thread);
      return () => this.touchBinding(channel, chatKey, thread);
    });
  }

  async recent(limit?: number): Promise<RouterRow[]> {
    return this.#call('read', 'recent', undefined, undefined, () => {
      const n = normalizeLimit(this.errors, limit, 'recent: limit');
      return () => this.readRecentBindings(n);
    });
  }

  async append(
    id: string,
    type: string,
    payload: JsonValue = null,
    call?: CallOptions,
  ): Promise<SessionEvent> {
    return this.#call('write', 'append', id, call, () => {
      assertId(this.errors, id);
      assertEventType(this.errors, type);
      const copy = copyJson<JsonValue>(this.errors, payload, 'event payload');
      return (signal) => this.appendEvent(id, type, copy, signal);
    });
  }

  async events(id: string, query?: EventQuery, call?: CallOptions): Promise<SessionEvent[]> {
    return this.#call('read', 'events', id, call, () => {
      assertId(this.errors, id);
      const q = normalizeEventQuery(this.errors, query);
      return (signal) => this.readEvents(id, q.afterSequence, q.limit, signal);
    });
  }

  async enforceMax(max: number, call?: CallOptions): Promise<number> {
    return this.#call('write', 'enforceMax', undefined, call, () => {
      assertMax(this.errors, max);
      return (signal) => (max <= 0 ? Promise.resolve(0) : this.pruneRoots(max, signal));
    });
  }

  async repair(call?: CallOptions): Promise<RepairReport> {
    return this.#call(
      'write',
      'repair',
      undefined,
      call,
      () => (signal) => this.repairStore(signal),
    );
  }

  // ------------------------------------------------------------------ plumbing

  #window(
    operation: 'loadMessages' | 'loadMessageWindow',
    id: string,
    window: MessageWindowQuery | undefined,
    call: CallOptions | undefined,
  ): Promise<MessageWindow<M>> {
    return this.#call('read', operation, id, call, () => {
      assertId(this.errors, id);
      const w = normalizeMessageWindow(this.errors, window);
      return (signal) => this.readWindow(id, w, signal);
    });
  }

  /**
   * One public call: the closed check, the call options, `validate()` — which checks
   * and copies the arguments (before any I/O) and returns the work —, the signal,
   * readiness, then the work. A read loses the race against its signal (`aborted` at
   * once); a write's outcome is always awaited (it checks the signal before its atomic
   * step). Failures that are not `SessionKitError`s go through `toStoreError`.
   */
  async #call<T>(
    kind: 'read' | 'write',
    operation: StoreOperation,
    sessionId: unknown,
    call: CallOptions | undefined,
    validate: () => (signal: AbortSignal | undefined) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) throw this.errors.closed();
    const signal = normalizeCallOptions(this.errors, call, operation);
    const work = validate();
    const id = typeof sessionId === 'string' ? sessionId : undefined;
    throwIfAborted(this.errors, signal, operation, id);
    try {
      // Once ready, the work starts in this same synchronous step: nothing can run between
      // validation and the primitive (an in-process backend stays atomic per call).
      if (!this.#isReady) {
        await this.#whenReady();
        throwIfAborted(this.errors, signal, operation, id);
      }
      const running = work(signal);
      const result =
        kind === 'read'
          ? await raceAbort(running, signal, () => this.errors.aborted(operation, id))
          : await running;
      return this.#copyResults ? structuredClone(result) : result;
    } catch (e) {
      throw isSessionKitError(e) ? e : this.toStoreError(e, operation, id);
    }
  }

  /** Runs `prepare()` once; a failure is reported and the next call tries again. */
  #whenReady(): Promise<void> {
    this.#ready ??= this.prepare().then(
      () => {
        this.#isReady = true;
      },
      (e: unknown) => {
        this.#ready = undefined;
        throw e;
      },
    );
    return this.#ready;
  }
}

/** The id of a session-shaped argument, for messages; `undefined` when it has none. */
function idOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    const id = (value as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `promise`, or the error from `aborted()` as soon as `signal` fires (the promise then
 * runs on; its outcome is ignored).
 */
function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  aborted: () => Error,
): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(aborted());
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
