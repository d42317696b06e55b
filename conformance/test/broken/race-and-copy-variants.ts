import type {
  CallOptions,
  CommitInput,
  EventQuery,
  JsonValue,
  ListOptions,
  Session,
} from '@sessionkit/core';
import { type MemoryRecord, type MemoryStore, putRecord } from '@sessionkit/memory';
import { recordOf, tick } from './variant-helpers.js';
import type { BrokenVariant } from './variants.js';

/** Replaces a record's header with `fields` merged in and refreshes its index entry. */
function patchHeader(inner: MemoryStore, id: string, fields: Partial<MemoryRecord['header']>) {
  const record = recordOf(inner, id);
  record.header = { ...record.header, ...fields };
  putRecord(inner.backend, record);
}
/** `read()`, or `undefined` when reading the caller's argument throws (a hostile getter). */
function peek<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
const locks = new WeakMap<object, Promise<unknown>>();
/** Runs `fn` after every earlier `fn` on the same backend (a save-only lock). */
function serialised<T>(inner: MemoryStore, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(inner.backend) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  locks.set(
    inner.backend,
    next.catch(() => undefined),
  );
  return next;
}

/**
 * Broken variants for caller-owned results and argument copies (events, commit results,
 * merges), what an event and a touch carry, a search's archived filter, and writes racing
 * a delete or a save. Each is one plausible bug on the memory adapter and names the tests
 * that must fail.
 */
export const COPY_AND_RACE_VARIANTS: BrokenVariant[] = [
  {
    name: 'commit-result-shares-updatedAt',
    bug: "commit's result holds the stored updatedAt Date itself",
    caughtBy: [{ spec: 'committer', test: 'a commit result is caller-owned' }],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const r = await inner.commit(id, input, call);
        const stored = recordOf(inner, id).header.updatedAt;
        return stored.getTime() === r.updatedAt.getTime() ? { ...r, updatedAt: stored } : r;
      },
    }),
  },
  {
    name: 'append-returns-stored-event',
    bug: 'append returns the stored event object, so mutating its payload changes the log',
    caughtBy: [{ spec: 'event-log', test: 'the event append returns is caller-owned' }],
    override: (inner) => ({
      async append(id: string, type: string, payload?: JsonValue, call?: CallOptions) {
        await inner.append(id, type, payload, call);
        const events = recordOf(inner, id).events;
        return events[events.length - 1]!;
      },
    }),
  },
  {
    name: 'events-share-at',
    bug: 'events copies payloads but hands out the stored `at` Dates',
    caughtBy: [{ spec: 'event-log', test: 'event times are caller-owned' }],
    override: (inner) => ({
      async events(id: string, query?: EventQuery, call?: CallOptions) {
        const got = await inner.events(id, query, call);
        const stored = recordOf(inner, id).events;
        return got.map((e) => ({ ...e, at: stored.find((s) => s.sequence === e.sequence)!.at }));
      },
    }),
  },
  {
    name: 'commit-keeps-patch-state',
    bug: "commit stores the caller's patch.state object, not a copy",
    caughtBy: [{ spec: 'committer', test: 'a commit keeps no reference to its patch' }],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const r = await inner.commit(id, input, call);
        const state = input.patch?.state;
        if (state !== undefined && state !== null) patchHeader(inner, id, { state });
        return r;
      },
    }),
  },
  {
    name: 'save-overwrites-racing-commit',
    bug: 'save checks the revision, yields, then writes (saves are serialised among themselves, not with commits)',
    caughtBy: [
      { spec: 'concurrency', test: 'a save racing an unconditional commit never drops the commit' },
    ],
    override: (inner) => ({
      save: (session: Session, call?: CallOptions) =>
        serialised(inner, async () => {
          const stored = inner.backend.records.get(peek(() => session.id) ?? '');
          const base = peek(() => session.revision);
          if (!stored || base === undefined || stored.header.revision !== base)
            return inner.save(session, call);
          await tick();
          const now = inner.backend.records.get(stored.header.id);
          if (now) now.header = { ...now.header, revision: base };
          return inner.save(session, call);
        }),
    }),
  },
  {
    name: 'touch-bumps-whole-chat',
    bug: 'touch moves every thread of the (channel, chatKey) to the front, not only the one named',
    caughtBy: [{ spec: 'session-router', test: 'touch moves only the named thread to the front' }],
    override: (inner) => ({
      async touch(channel: string, chatKey: string, thread: string) {
        for (const row of [...inner.backend.bindings.values()])
          if (row.channel === channel && row.chatKey === chatKey && row.thread !== thread)
            await inner.touch(channel, chatKey, row.thread);
        await inner.touch(channel, chatKey, thread);
      },
    }),
  },
  {
    name: 'query-shows-archived',
    bug: 'a search (query) ignores includeArchived and returns archived sessions too',
    caughtBy: [{ spec: 'store', test: 'a search hides archived sessions unless includeArchived' }],
    override: (inner) => ({
      list: (options: ListOptions = {}, call?: CallOptions) =>
        inner.list(
          peek(() => options.query) !== undefined ? { ...options, includeArchived: true } : options,
          call,
        ),
    }),
  },
  {
    name: 'merge-result-shares-metadata',
    bug: "merge's result holds the parent's stored metadata object",
    caughtBy: [{ spec: 'merge', test: 'the parent merge returns is caller-owned' }],
    override: (inner) => ({
      async merge(childId: string, call?: CallOptions) {
        const p = await inner.merge(childId, call);
        return { ...p, metadata: recordOf(inner, p.id).header.metadata };
      },
    }),
  },
  {
    name: 'event-revision-ignores-save',
    bug: 'append stamps the revision of the last commit (or create), not of saves and merges',
    caughtBy: [{ spec: 'event-log', test: 'an event carries the revision a save left' }],
    override: (inner) => {
      const seen = new Map<string, number>();
      return {
        async commit(id: string, input: CommitInput, call?: CallOptions) {
          const r = await inner.commit(id, input, call);
          seen.set(id, r.revision);
          return r;
        },
        async delete(id: string, call?: CallOptions) {
          await inner.delete(id, call);
          seen.delete(id);
        },
        async append(id: string, type: string, payload?: JsonValue, call?: CallOptions) {
          const e = await inner.append(id, type, payload, call);
          const revision = seen.get(id) ?? 1;
          const stored = recordOf(inner, id).events;
          stored[stored.length - 1] = { ...stored[stored.length - 1]!, revision };
          return { ...e, revision };
        },
      };
    },
  },
  {
    name: 'merge-resurrects-deleted-parent',
    bug: 'merge reads the parent, yields, and writes it back even when a delete removed it meanwhile',
    caughtBy: [
      {
        spec: 'concurrency',
        test: 'a merge racing a delete of the parent never resurrects the parent',
      },
    ],
    override: (inner) => ({
      async merge(childId: string, call?: CallOptions) {
        const child = inner.backend.records.get(childId);
        const parentId = child?.header.parentId;
        const parent = parentId === undefined ? undefined : inner.backend.records.get(parentId);
        await tick();
        if (child && parent && !inner.backend.records.has(parent.header.id)) {
          putRecord(inner.backend, parent);
          child.header = { ...child.header, parentId: parent.header.id };
          putRecord(inner.backend, child);
          const set = inner.backend.childrenOf.get(parent.header.id) ?? new Set<string>();
          set.add(childId);
          inner.backend.childrenOf.set(parent.header.id, set);
        }
        return inner.merge(childId, call);
      },
    }),
  },
  {
    name: 'branch-of-deleted-parent',
    bug: 'branch reads the parent, yields, then writes the branch even if the parent was deleted meanwhile',
    caughtBy: [
      { spec: 'concurrency', test: 'a branch racing a delete of its parent never points at it' },
    ],
    override: (inner) => ({
      async branch(parentId: string, atTurn: number, call?: CallOptions) {
        const parent = inner.backend.records.get(peek(() => parentId) ?? '');
        await tick();
        if (!parent || inner.backend.records.has(parent.header.id))
          return inner.branch(parentId, atTurn, call);
        putRecord(inner.backend, parent);
        try {
          return await inner.branch(parentId, atTurn, call);
        } finally {
          inner.backend.records.delete(parent.header.id);
          inner.backend.index.delete(parent.header.id);
        }
      },
    }),
  },
];
