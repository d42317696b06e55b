import {
  type CommitInput,
  type ListOptions,
  type MessageWindowQuery,
  messageText,
} from '@sessionkit/core';
import {
  compareListOrder,
  nextUpdatedAt,
  normalizeMessageWindow,
  windowBounds,
} from '@sessionkit/core/adapter';
import type { MemoryRecord, MemoryStore } from '@sessionkit/memory';
import { tick } from './variant-helpers.js';
import type { BrokenVariant } from './variants.js';

/**
 * Broken variants for the contract rules sharpened in DESIGN (merge, promotion, value
 * limits, search, windows): each is one plausible bug, re-implemented on the memory
 * adapter, and names the tests that must fail.
 */
export const CONTRACT_VARIANTS: BrokenVariant[] = [
  {
    name: 'merge-checks-count-only',
    bug: 'merge checks only the parent message count and gives it the branch counters',
    caughtBy: [
      {
        spec: 'merge',
        test: 'merge into a parent whose history was saved with other messages diverges',
      },
      {
        spec: 'merge',
        test: 'merge into a parent that replaced its history with as many messages diverges',
      },
      { spec: 'merge', test: 'merge keeps the counter changes the parent made after the branch' },
    ],
    override: (inner) => ({
      async merge(childId: string) {
        const b = inner.backend;
        const child = b.records.get(childId);
        const parentId = child?.header.parentId;
        const parent = parentId === undefined ? undefined : b.records.get(parentId);
        if (!child || !parent || parent.messages.length !== (child.header.branchedAtTurn ?? 0)) {
          return inner.merge(childId);
        }
        parent.header = {
          ...parent.header,
          tokenCount: child.header.tokenCount,
          costUsd: child.header.costUsd,
          turnCount: child.header.turnCount,
          revision: parent.header.revision + 1,
          updatedAt: nextUpdatedAt(parent.header.updatedAt),
        };
        parent.messages = structuredClone(child.messages);
        parent.searchTexts = child.searchTexts.slice();
        await putRecord(inner);
        return inner.load(parent.header.id);
      },
    }),
  },
  {
    name: 'merge-takes-branch-fields',
    bug: 'merge copies the branch title, metadata, status and state onto the parent',
    caughtBy: [
      { spec: 'merge', test: 'merge keeps the parent title, metadata, status, folder and state' },
    ],
    override: (inner) => ({
      async merge(childId: string) {
        const merged = await inner.merge(childId);
        const child = await inner.load(childId);
        const { title, metadata, status, state, mode } = child;
        return inner.save({ ...merged, title, metadata, status, state, mode });
      },
    }),
  },
  {
    name: 'promotion-keeps-branch-point',
    bug: 'delete promotes children without re-basing branchedAtTurn onto the new parent',
    caughtBy: [
      { spec: 'merge', test: 'promotion re-bases branchedAtTurn onto the new parent' },
      { spec: 'merge', test: 'merge after a promotion never skips the new parent history' },
    ],
    override: (inner) => ({
      async delete(id: string) {
        const b = inner.backend;
        const kept = new Map<string, number | undefined>();
        for (const [childId, r] of b.records) {
          if (r.header.parentId === id) kept.set(childId, r.header.branchedAtTurn);
        }
        await inner.delete(id);
        for (const [childId, at] of kept) {
          const r = b.records.get(childId);
          if (r) {
            r.header = { ...r.header, branchedAtTurn: at };
            await putRecord(inner);
          }
        }
      },
    }),
  },
  {
    name: 'delete-waits-for-missing-parent',
    bug: 'delete fails when the session names a parent that does not exist',
    caughtBy: [
      { spec: 'merge', test: 'a session whose parent does not exist deletes like any other' },
    ],
    override: (inner) => ({
      async delete(id: string) {
        const parentId = inner.backend.records.get(id)?.header.parentId;
        if (parentId !== undefined && !inner.backend.records.has(parentId)) {
          const { errorsFor } = await import('@sessionkit/core/adapter');
          throw errorsFor('memory').unavailable(`lock on parent "${parentId}" timed out`);
        }
        return inner.delete(id);
      },
    }),
  },
  {
    name: 'increments-clamped-at-zero',
    bug: 'an increment that would make a counter negative is clamped to 0 instead of rejected',
    caughtBy: [
      { spec: 'value-limits', test: 'rejects an increment that takes tokenCount below 0' },
      { spec: 'value-limits', test: 'rejects an increment that takes costUsd below 0' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput) {
        const h = inner.backend.records.get(id)?.header;
        const inc = input.increment;
        if (!h || !inc) return inner.commit(id, input);
        const clamp = (cur: number, by: number | undefined) =>
          by === undefined ? undefined : Math.max(by, -cur);
        return inner.commit(id, {
          ...input,
          increment: {
            tokenCount: clamp(h.tokenCount, inc.tokenCount),
            costUsd: clamp(h.costUsd, inc.costUsd),
            turnCount: clamp(h.turnCount, inc.turnCount),
          },
        });
      },
    }),
  },
  {
    name: 'increment-result-unchecked',
    bug: 'counter increments are added without checking that the result stays in range',
    caughtBy: [
      {
        spec: 'value-limits',
        test: 'rejects an increment that takes tokenCount past MAX_SAFE_INTEGER',
      },
      { spec: 'value-limits', test: 'rejects an increment that takes costUsd to Infinity' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput) {
        const { increment, ...rest } = input;
        const result = await inner.commit(id, rest);
        const r = inner.backend.records.get(id);
        if (r && increment) {
          r.header = {
            ...r.header,
            tokenCount: r.header.tokenCount + (increment.tokenCount ?? 0),
            costUsd: r.header.costUsd + (increment.costUsd ?? 0),
            turnCount: r.header.turnCount + (increment.turnCount ?? 0),
          };
          await putRecord(inner);
        }
        return result;
      },
    }),
  },
  {
    name: 'prototype-keys-assigned',
    bug: 'state and metadata are copied with plain assignment, so a __proto__ key is lost',
    caughtBy: [
      {
        spec: 'value-limits',
        test: '__proto__, constructor and prototype keys round-trip as data',
      },
    ],
    override: (inner) => ({
      async create(session) {
        const assign = (v: unknown): unknown => {
          if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
          const out: Record<string, unknown> = {};
          for (const [k, item] of Object.entries(v)) out[k] = assign(item);
          return out;
        };
        return inner.create({
          ...session,
          state: assign(session.state) as never,
          metadata: assign(session.metadata) as never,
        });
      },
    }),
  },
  {
    name: 'search-across-messages',
    bug: 'search matches the newline-joined text of all messages, so a query can span two',
    caughtBy: [
      { spec: 'search', test: 'query matches within one message and never across two' },
      { spec: 'search', test: 'query never matches across two commits or across title and text' },
    ],
    override: (inner) => ({
      async list(options: ListOptions = {}) {
        const { query, ...rest } = options;
        if (!query) return inner.list(options);
        const q = query.toLowerCase();
        const hits = new Set<string>();
        for (const [id, r] of inner.backend.records) {
          const text = r.messages.map((m) => messageText(m).toLowerCase()).join('\n');
          if (r.header.title.toLowerCase().includes(q) || text.includes(q)) hits.add(id);
        }
        const all = await inner.list({ ...rest, limit: 1000, offset: 0 });
        const matched = all.filter((s) => hits.has(s.id));
        const offset = rest.offset ?? 0;
        return matched.slice(offset, offset + (rest.limit || 50));
      },
    }),
  },
  {
    name: 'search-includes-tool-arguments',
    bug: 'search indexes the whole message JSON (tool arguments, roles, keys)',
    caughtBy: [
      { spec: 'search', test: 'query never matches tool arguments, roles, names or JSON keys' },
    ],
    override: (inner) => ({
      async list(options: ListOptions = {}) {
        const { query, ...rest } = options;
        if (!query) return inner.list(options);
        const q = query.toLowerCase();
        const all = await inner.list({ ...rest, limit: 1000, offset: 0 });
        return all
          .filter((s) => {
            const r = inner.backend.records.get(s.id);
            return (
              s.title.toLowerCase().includes(q) ||
              (r?.messages ?? []).some((m) => JSON.stringify(m).toLowerCase().includes(q))
            );
          })
          .sort((a, b) => compareListOrder(a, b, rest.oldestFirst ?? false));
      },
    }),
  },
  {
    name: 'startafter-rejects-summaries',
    bug: 'list rejects the last summary of a page as startAfter (only {updatedAt, id} allowed)',
    caughtBy: [
      { spec: 'search', test: 'keyset paging takes the last summary of a page as startAfter' },
    ],
    override: (inner) => ({
      async list(options: ListOptions = {}) {
        const c = options.startAfter as Record<string, unknown> | undefined;
        if (c && Object.keys(c).some((k) => k !== 'updatedAt' && k !== 'id')) {
          const { errorsFor } = await import('@sessionkit/core/adapter');
          throw errorsFor('memory').invalid('list: startAfter: unknown option');
        }
        return inner.list(options);
      },
    }),
  },
  {
    name: 'window-ignored',
    bug: 'loadMessages ignores the window and returns the whole history',
    caughtBy: [
      {
        spec: 'message-window',
        test: '{last: n} returns the last n messages, all of them when there are fewer',
      },
    ],
    override: (inner) => ({
      async loadMessages(id: string) {
        return inner.loadMessages(id);
      },
    }),
  },
  {
    name: 'window-outside-snapshot',
    bug: 'a window reads the history length, yields, then slices the history as it is then',
    caughtBy: [{ spec: 'message-window', test: 'windows are never torn by concurrent commits' }],
    override: (inner) => ({
      async loadMessages(id: string, window?: MessageWindowQuery) {
        const w = normalizeMessageWindow(
          (await import('@sessionkit/core/adapter')).errorsFor('memory'),
          window,
        );
        const count = (await inner.loadMessages(id)).length;
        await tick();
        const { start, end } = windowBounds(w, count);
        const now = inner.backend.records.get(id)?.messages ?? [];
        return structuredClone(now.slice(start, end)) as never;
      },
      loadMessageWindow: undefined as never,
    }),
  },
  {
    name: 'summary-stale-after-merge',
    bug: 'merge rewrites the parent record but leaves its listing entry as it was',
    caughtBy: [
      // No explicit listing check in this test: the suite's invariant after every write.
      { spec: 'brancher', test: 'merge fast-forwards the parent to the child' },
    ],
    override: (inner) => ({
      async merge(childId: string) {
        const parentId = inner.backend.records.get(childId)?.header.parentId;
        const stale = parentId === undefined ? undefined : inner.backend.index.get(parentId);
        const merged = await inner.merge(childId);
        if (parentId !== undefined && stale) inner.backend.index.set(parentId, stale);
        return merged;
      },
    }),
  },
  {
    name: 'summary-stale-after-save',
    bug: 'save updates the record but not the listing entry (folder, title, counters)',
    caughtBy: [{ spec: 'store', test: 'save does not keep a reference to its argument' }],
    override: (inner) => ({
      async save(session) {
        const stale = inner.backend.index.get(session.id);
        const saved = await inner.save(session);
        if (stale) inner.backend.index.set(session.id, { ...stale, revision: saved.revision });
        return saved;
      },
    }),
  },
  {
    name: 'commit-trusts-remembered-state',
    bug: 'an instance commits from the state it remembers while the stored revision matches it, also over a re-created session',
    caughtBy: [
      {
        spec: 'concurrency',
        test: 'a session deleted and re-created through another instance: the next commit lands on the new one',
      },
    ],
    override: (inner) => {
      // Per instance, as a store's cache of the sessions it wrote last.
      const remembered = new Map<string, MemoryRecord>();
      return {
        async commit(id: string, input: CommitInput) {
          const stored = inner.backend.records.get(id);
          const mine = remembered.get(id);
          if (stored && mine && stored.header.revision === mine.header.revision) {
            inner.backend.records.set(id, structuredClone(mine));
            await putRecord(inner);
          }
          const result = await inner.commit(id, input);
          const after = inner.backend.records.get(id);
          if (after) remembered.set(id, structuredClone(after));
          return result;
        },
      };
    },
  },
];

/** Rebuilds the memory index after a variant edited records directly. */
async function putRecord(inner: MemoryStore): Promise<void> {
  await inner.repair();
}
