import type { CommitInput, EventQuery, ListOptions, Session } from '@sessionkit/core';
import { compareListOrder } from '@sessionkit/core/adapter';
import { bindingKey, followKey, type IndexEntry } from '@sessionkit/memory';
import type { BrokenVariant } from './variants.js';

/** The paging part of list options, and the rest (the filters and the order). */
function splitPaging(options: ListOptions = {}) {
  const { limit, offset, ...filters } = options;
  return { limit: limit || 50, offset: offset ?? 0, filters };
}

/**
 * Broken variants for the classes of issue 10's "what it missed" list that are not about
 * merge, value limits, search or windows: listing freshness after clone and commit,
 * filters, counters, save and clone of state/mode, the router, pruning and the event
 * log. Each is one plausible bug on the memory adapter and names the tests that must fail.
 */
export const V2_VARIANTS: BrokenVariant[] = [
  // ------------------------------------------------------------- listing freshness
  {
    name: 'summary-stale-after-folder-commit',
    bug: 'a commit patching folder or archivedAt leaves the listing entry in the old folder',
    caughtBy: [
      {
        spec: 'committer',
        test: 'list follows a commit that moves the folder, archives and unarchives',
      },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput) {
        const before = inner.backend.index.get(id);
        const result = await inner.commit(id, input);
        const entry = inner.backend.index.get(id);
        if (before && entry) {
          const stale: IndexEntry = { ...entry, folder: before.folder };
          if (before.archivedAt) stale.archivedAt = before.archivedAt;
          else delete stale.archivedAt;
          inner.backend.index.set(id, stale);
        }
        return result;
      },
    }),
  },
  {
    name: 'clone-summary-stale',
    bug: 'clone indexes the copy before copying the history (messageCount 0 in list)',
    caughtBy: [{ spec: 'brancher', test: 'clone carries state and mode and is listed as loaded' }],
    override: (inner) => ({
      async clone(id: string) {
        const copy = await inner.clone(id);
        const entry = inner.backend.index.get(copy.id);
        if (entry) inner.backend.index.set(copy.id, { ...entry, messageCount: 0, searchText: [] });
        return copy;
      },
    }),
  },
  // ------------------------------------------------------------- filters
  {
    name: 'folder-as-prefix',
    bug: 'the folder filter matches every folder that starts with the given one',
    caughtBy: [{ spec: 'search', test: 'filters apply before paging, exactly, on a mixed store' }],
    override: (inner) => ({
      async list(options?: ListOptions) {
        const { limit, offset, filters } = splitPaging(options);
        if (filters.folder === undefined) return inner.list(options);
        const { folder, ...rest } = filters;
        const all = await inner.list({ ...rest, limit: 1000 });
        return all.filter((s) => s.folder.startsWith(folder)).slice(offset, offset + limit);
      },
    }),
  },
  {
    name: 'after-compares-createdAt',
    bug: 'the after filter compares createdAt instead of updatedAt',
    caughtBy: [{ spec: 'search', test: 'filters apply before paging, exactly, on a mixed store' }],
    override: (inner) => ({
      async list(options?: ListOptions) {
        const { limit, offset, filters } = splitPaging(options);
        if (filters.after === undefined) return inner.list(options);
        const { after, ...rest } = filters;
        const all = await inner.list({ ...rest, limit: 1000 });
        return all
          .filter((s) => s.createdAt.getTime() > after.getTime())
          .slice(offset, offset + limit);
      },
    }),
  },
  {
    name: 'paging-before-filters',
    bug: 'limit and offset are applied to the whole ordered store, then the filters',
    caughtBy: [{ spec: 'search', test: 'filters apply before paging, exactly, on a mixed store' }],
    override: (inner) => ({
      async list(options?: ListOptions) {
        const { limit, offset, filters } = splitPaging(options);
        if (!options?.limit && !options?.offset) return inner.list(options);
        const { oldestFirst, startAfter } = filters;
        const page = await inner.list({
          includeArchived: true,
          ...(oldestFirst ? { oldestFirst } : {}),
          ...(startAfter ? { startAfter } : {}),
          limit,
          offset,
        });
        const matching = new Set((await inner.list({ ...filters, limit: 1000 })).map((s) => s.id));
        return page.filter((s) => matching.has(s.id));
      },
    }),
  },
  // ------------------------------------------------------------- counters
  {
    name: 'expected-count-zero-ignored',
    bug: 'commit treats expectedMessageCount: 0 as no expectation (a falsy check)',
    caughtBy: [
      { spec: 'committer', test: 'expectedMessageCount 0 holds only for an empty history' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput) {
        if (input.expectedMessageCount) return inner.commit(id, input);
        const { expectedMessageCount: _ignored, ...rest } = input;
        return inner.commit(id, rest);
      },
    }),
  },
  {
    name: 'counters-before-expectations',
    bug: 'commit adds the increments before it checks the expectations',
    caughtBy: [
      {
        spec: 'committer',
        test: 'a commit whose expectation fails changes no counter and no field',
      },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput) {
        const record = inner.backend.records.get(id);
        const entry = inner.backend.index.get(id);
        if (!input.increment || !record || !entry) return inner.commit(id, input);
        const { increment, ...rest } = input;
        for (const key of ['tokenCount', 'costUsd', 'turnCount'] as const) {
          const by = increment[key] ?? 0;
          record.header[key] += by;
          entry[key] += by;
        }
        return inner.commit(id, rest);
      },
    }),
  },
  // ------------------------------------------------------------- save and clone
  {
    name: 'save-keeps-state-and-mode',
    bug: 'save keeps the stored state and mode when the session has none (cannot clear)',
    caughtBy: [{ spec: 'store', test: 'save without state, mode or archivedAt clears them' }],
    override: (inner) => ({
      async save(session: Session) {
        const stored = inner.backend.records.get(session.id)?.header;
        const state = session.state ?? stored?.state;
        const mode = session.mode ?? stored?.mode;
        return inner.save({
          ...session,
          ...(state !== undefined ? { state } : {}),
          ...(mode !== undefined ? { mode } : {}),
        });
      },
    }),
  },
  {
    name: 'clone-drops-state-and-mode',
    bug: 'clone copies the history and counters but not state and mode',
    caughtBy: [{ spec: 'brancher', test: 'clone carries state and mode and is listed as loaded' }],
    override: (inner) => ({
      async clone(id: string) {
        const copy = await inner.clone(id);
        const record = inner.backend.records.get(copy.id);
        const entry = inner.backend.index.get(copy.id);
        for (const target of [record?.header, entry, copy]) {
          if (!target) continue;
          delete target.state;
          delete target.mode;
        }
        return copy;
      },
    }),
  },
  // ------------------------------------------------------------- router
  {
    name: 'recent-without-default-limit',
    bug: 'recent() without a limit (or 0) returns every binding instead of 50',
    caughtBy: [
      { spec: 'session-router', test: 'recent without a limit returns the newest 50 bindings' },
    ],
    override: (inner) => ({
      async recent(limit?: number) {
        return inner.recent(limit || 1000);
      },
    }),
  },
  {
    name: 'rebind-keeps-time',
    bug: 'bind over an existing binding replaces the session but keeps the old time',
    caughtBy: [
      {
        spec: 'session-router',
        test: 're-binding a tuple sets its time to now and moves it to the front',
      },
    ],
    override: (inner) => ({
      async bind(channel: string, chatKey: string, thread: string, sessionId: string) {
        const key = bindingKey(channel, chatKey, thread);
        const previous = inner.backend.bindings.get(key)?.updatedAt;
        await inner.bind(channel, chatKey, thread, sessionId);
        const row = inner.backend.bindings.get(key);
        if (previous && row) row.updatedAt = previous;
      },
    }),
  },
  {
    name: 'unbind-keeps-recent-row',
    bug: 'unbind clears the session of the binding but leaves its row (seen by recent)',
    caughtBy: [{ spec: 'session-router', test: 'unbind removes the row from recent' }],
    override: (inner) => ({
      async unbind(channel: string, chatKey: string, thread: string) {
        await inner.resolve(channel, chatKey, thread, ''); // argument checks only
        const row = inner.backend.bindings.get(bindingKey(channel, chatKey, thread));
        if (row) row.sessionId = '';
      },
    }),
  },
  {
    name: 'tui-without-live-session-resolves-empty',
    bug: 'follow "tui" with an empty live session id resolves to "" instead of the binding',
    caughtBy: [
      {
        spec: 'session-router',
        test: 'follow "tui" with an empty live session id resolves to the binding',
      },
    ],
    override: (inner) => ({
      async resolve(channel: string, chatKey: string, thread: string, liveSessionId: string) {
        const resolved = await inner.resolve(channel, chatKey, thread, liveSessionId);
        const target = inner.backend.follows.get(followKey(channel, chatKey))?.target;
        return target === 'tui' ? liveSessionId : resolved;
      },
    }),
  },
  // ------------------------------------------------------------- pruning
  {
    name: 'prune-by-createdAt',
    bug: 'enforceMax keeps the newest roots by createdAt',
    caughtBy: [{ spec: 'pruner', test: 'enforceMax ranks roots by updatedAt, not createdAt' }],
    override: (inner) => ({
      async enforceMax(max: number) {
        if (max <= 0) return inner.enforceMax(max);
        const roots = [...inner.backend.index.values()]
          .filter((e) => e.parentId === undefined)
          .map((e) => ({ id: e.id, updatedAt: e.createdAt }))
          .sort((a, b) => compareListOrder(a, b, false));
        let deleted = 0;
        for (const r of roots.slice(max)) await inner.delete(r.id).then(() => deleted++);
        return deleted;
      },
    }),
  },
  {
    name: 'prune-counts-sub-sessions',
    bug: 'enforceMax ranks every session, so new sub-sessions take places among the newest max',
    caughtBy: [
      { spec: 'pruner', test: 'sub-sessions never take places among the newest max roots' },
    ],
    override: (inner) => ({
      async enforceMax(max: number) {
        if (max <= 0) return inner.enforceMax(max);
        const ranked = [...inner.backend.index.values()].sort((a, b) =>
          compareListOrder(a, b, false),
        );
        let deleted = 0;
        for (const e of ranked.slice(max)) {
          if (e.parentId === undefined) await inner.delete(e.id).then(() => deleted++);
        }
        return deleted;
      },
    }),
  },
  {
    name: 'prune-ties-by-locale',
    bug: 'enforceMax breaks updatedAt ties with a locale collation of the ids, unlike list',
    caughtBy: [
      { spec: 'pruner', test: 'enforceMax breaks updatedAt ties by id, as list orders them' },
    ],
    override: (inner) => ({
      async enforceMax(max: number) {
        if (max <= 0) return inner.enforceMax(max);
        const roots = [...inner.backend.index.values()]
          .filter((e) => e.parentId === undefined)
          .sort(
            (a, b) =>
              b.updatedAt.getTime() - a.updatedAt.getTime() || b.id.localeCompare(a.id, 'en'),
          );
        let deleted = 0;
        for (const r of roots.slice(max)) await inner.delete(r.id).then(() => deleted++);
        return deleted;
      },
    }),
  },
  // ------------------------------------------------------------- events
  {
    name: 'events-options-unchecked',
    bug: 'events ignores unknown options and clamps a limit over 10000 instead of rejecting',
    caughtBy: [
      { spec: 'event-log', test: 'events rejects unknown options and a limit over 10000' },
    ],
    override: (inner) => ({
      async events(id: string, query?: EventQuery) {
        const { afterSequence, limit } = query ?? {};
        return inner.events(id, {
          ...(afterSequence !== undefined ? { afterSequence } : {}),
          ...(limit !== undefined ? { limit: Math.min(limit, 10_000) } : {}),
        });
      },
    }),
  },
];
