// The listing invariant, checked after every write of every test: whatever a spec does,
// the store's summary of each session it wrote must equal the loaded session without its
// messages plus `messageCount`, and `loadMessages` must equal `load().messages`. Tests
// see the store through a proxy that runs the check when a write resolves while no other
// write of the test is in flight (a check racing a write could see two states).
import {
  type HistoryReader,
  isHistoryReader,
  isSessionKitError,
  type Session,
  type SessionSummary,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import type { ConformanceInitializer } from './types.js';

/** Methods after which the sessions they touched are checked. */
const WRITES = new Set([
  'create',
  'save',
  'delete',
  'commit',
  'branch',
  'clone',
  'merge',
  'saveRuntimeStatus',
  'append',
  'enforceMax',
  'repair',
]);

/** Counts a test's writes in flight, over its store and every peer. */
export class WriteWatch {
  #inFlight = 0;
  #started = 0;
  /** Set when the test damaged the store on purpose: the invariant no longer applies. */
  faulted = false;
  /** Message-body reads the checks made, which a probe must not count against a test. */
  checkerReads = 0;

  constructor(private readonly probe?: (store: Store) => number | Promise<number>) {}

  /**
   * `store` as tests see it: every method forwards to `store` (bound to it, so private
   * fields keep working); writes are counted and followed by the invariant check.
   */
  wrap<S extends Store>(store: S): S {
    return new Proxy(store, {
      get: (target, key, receiver) => {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        if (typeof key !== 'string' || key === 'close') return method.bind(target);
        if (WRITES.has(key)) return (...args: unknown[]) => this.#write(target, key, method, args);
        if (!this.probe) return method.bind(target);
        return (...args: unknown[]) => this.#probed(target, key, () => method.apply(target, args));
      },
    });
  }

  async #write(store: Store, name: string, method: (...a: unknown[]) => unknown, args: unknown[]) {
    const before = this.#inFlight === 0 ? await this.#touchedBefore(store, name, args) : [];
    this.#inFlight++;
    this.#started++;
    let result: unknown;
    try {
      result = await this.#probed(store, name, () => method.apply(store, args));
    } finally {
      this.#inFlight--;
    }
    if (this.#inFlight === 0 && !this.faulted) {
      const ids = [...before, ...touchedAfter(name, args, result)];
      await this.#check(store, name, [...new Set(ids)]);
    }
    return result;
  }

  /**
   * Runs one call and checks the probe kept its promise: a counter that only ever grows.
   * A probe that goes down would let the body-read tests pass a store that reads bodies.
   */
  async #probed(store: Store, name: string, call: () => unknown): Promise<unknown> {
    if (!this.probe) return call();
    const before = await this.probe(store);
    const result = await call();
    const after = await this.probe(store);
    if (after < before) {
      throw new Error(
        `probes.messageBodyReads went down from ${before} to ${after} during ${name}(): the probe must count every message-body read and never decrease`,
      );
    }
    return result;
  }

  /** Before a delete: the sessions whose summaries it changes (parent, promoted children). */
  async #touchedBefore(store: Store, name: string, args: unknown[]): Promise<string[]> {
    if (name !== 'delete' || typeof args[0] !== 'string' || this.faulted) return [];
    const s = await this.#counted(store, () => store.load(args[0] as string)).catch(() => null);
    if (!s) return [];
    return [...(s.parentId ? [s.parentId] : []), ...s.children];
  }

  /** Runs `fn` and counts the message-body reads it makes as the checker's. */
  async #counted<T>(store: Store, fn: () => Promise<T>): Promise<T> {
    const before = this.probe ? await this.probe(store) : 0;
    try {
      return await fn();
    } finally {
      if (this.probe) this.checkerReads += (await this.probe(store)) - before;
    }
  }

  async #check(store: Store, after: string, ids: string[]): Promise<void> {
    const started = this.#started;
    try {
      for (const id of ids) await this.#counted(store, () => checkSession(store, id));
    } catch (e) {
      // A write began during the check: what it saw may mix two states, so it proves nothing.
      if (this.#started !== started || this.faulted) return;
      // The test ended (its store was closed) while a background writer was still going.
      if (isSessionKitError(e, 'closed')) return;
      const detail = e instanceof Error ? e.message : String(e);
      throw new Error(`after ${after}(): the listing invariant does not hold: ${detail}`);
    }
  }
}

/** The sessions a resolved write touched, from its arguments and result. */
function touchedAfter(name: string, args: unknown[], result: unknown): string[] {
  const r = result as Partial<Session> | undefined;
  switch (name) {
    case 'create':
    case 'branch':
    case 'clone':
    case 'save':
      return r?.id ? [r.id, ...(r.parentId ? [r.parentId] : [])] : [];
    case 'merge':
      return [...(typeof args[0] === 'string' ? [args[0]] : []), ...(r?.id ? [r.id] : [])];
    case 'commit':
    case 'saveRuntimeStatus':
    case 'append':
      return typeof args[0] === 'string' ? [args[0]] : [];
    default:
      return [];
  }
}

/**
 * Asserts the invariant for one session: found by `list` (its folder, archived included,
 * keyset-paged from its own `updatedAt`), its summary equals `load` without messages plus
 * `messageCount`, and the history readers agree with `load`. A session that is gone or
 * unreadable is not checked (another part of the test removed or damaged it).
 */
export async function checkSession(store: Store, id: string): Promise<void> {
  let loaded: Session;
  try {
    loaded = await store.load(id);
  } catch (e) {
    if (isSessionKitError(e, 'not_found') || isSessionKitError(e, 'corrupt')) return;
    throw e;
  }
  const { messages, ...rest } = loaded;
  const summary = await findSummary(store, loaded);
  expect(summary, `session "${id}" is missing from list()`).toBeDefined();
  expect(summary, `the summary of "${id}" differs from load()`).toEqual({
    ...rest,
    messageCount: messages.length,
  });
  if (!isHistoryReader(store)) return;
  const reader = store as Store & HistoryReader;
  expect(await reader.loadMessages(id), `loadMessages("${id}") differs from load()`).toEqual(
    messages,
  );
  if (typeof reader.loadMessageWindow === 'function') {
    const w = await reader.loadMessageWindow(id, { last: 2 });
    expect(w, `loadMessageWindow("${id}", {last: 2}) differs from load()`).toEqual({
      messages: messages.slice(-2),
      offset: Math.max(0, messages.length - 2),
      messageCount: messages.length,
      revision: loaded.revision,
    });
  }
}

async function findSummary(store: Store, s: Session): Promise<SessionSummary | undefined> {
  // Oldest first from just before the session's own key: it is on the first page unless
  // many sessions share its millisecond.
  let startAfter = { updatedAt: s.updatedAt, id: '' };
  for (;;) {
    const page = await store.list({
      folder: s.folder,
      includeArchived: true,
      oldestFirst: true,
      startAfter,
      limit: 100,
    });
    const hit = page.find((x) => x.id === s.id);
    if (hit) return hit;
    const last = page[page.length - 1];
    if (page.length < 100 || !last || last.updatedAt.getTime() > s.updatedAt.getTime()) {
      return undefined;
    }
    startAfter = { updatedAt: last.updatedAt, id: last.id };
  }
}

/**
 * The initializer a test sees: its probes do not count the checker's reads, and using a
 * fault hook switches the invariant off for the rest of the test.
 */
export function watchedInitializer(
  init: ConformanceInitializer,
  watch: WriteWatch,
): ConformanceInitializer {
  const out: ConformanceInitializer = { ...init };
  const probe = init.probes?.messageBodyReads;
  if (probe) {
    out.probes = {
      ...init.probes,
      messageBodyReads: async (store: Store) => (await probe(store)) - watch.checkerReads,
    };
  }
  if (init.faults) {
    const faults: NonNullable<ConformanceInitializer['faults']> = {};
    for (const [name, value] of Object.entries(init.faults)) {
      (faults as Record<string, unknown>)[name] =
        typeof value === 'function'
          ? (...args: unknown[]) => {
              watch.faulted = true;
              return (value as (...a: unknown[]) => unknown)(...args);
            }
          : value;
    }
    out.faults = faults;
  }
  return out;
}
