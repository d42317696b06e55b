import {
  type FullStore,
  isValidId,
  type JsonValue,
  type ListOptions,
  type Session,
  type SessionInput,
  STORE_METHODS,
} from '@sessionkit/core';
import { childIds, MemoryStore } from '@sessionkit/memory';
import type { ConformanceInitializer, SpecName } from '../../src/index.js';
import { memoryInitializer } from '../memory-initializer.js';
import { CONTRACT_VARIANTS } from './contract-variants.js';
import { FRAMEWORK_VARIANTS } from './framework-variants.js';
import { KIT_VARIANTS } from './kit-variants.js';
import { COPY_AND_RACE_VARIANTS } from './race-and-copy-variants.js';
import { RULE_VARIANTS } from './rule-variants.js';
import { V2_VARIANTS } from './v2-variants.js';
import { tick } from './variant-helpers.js';

/**
 * A deliberately broken copy of the memory adapter and the spec files meant to catch it.
 * Each variant re-implements one method the way a plausible bug would.
 */
export interface BrokenVariant {
  name: string;
  /** What is wrong, in one line. */
  bug: string;
  /** The tests (spec file and test name) meant to catch this bug: each must fail. */
  caughtBy: { spec: SpecName; test: string }[];
  override(inner: MemoryStore): Partial<FullStore>;
}

function wrap(inner: MemoryStore, overrides: Partial<FullStore>): FullStore {
  const out: Record<string, unknown> = { backend: inner.backend };
  for (const m of STORE_METHODS) out[m] = (inner[m] as (...a: unknown[]) => unknown).bind(inner);
  return Object.assign(out, overrides) as unknown as FullStore;
}

/** The initializer of a broken variant (same probes and faults as the real adapter). */
export function brokenInitializer(variant: BrokenVariant): ConformanceInitializer {
  const make = (inner: MemoryStore) => wrap(inner, variant.override(inner));
  const base = memoryInitializer as unknown as ConformanceInitializer;
  return {
    ...base,
    name: `memory (broken: ${variant.name})`,
    create: () => make(new MemoryStore()),
    createPeer: (store) =>
      make(new MemoryStore({ backend: (store as unknown as MemoryStore).backend })),
  };
}

export const BROKEN_VARIANTS: BrokenVariant[] = [
  {
    name: 'save-without-revision-check',
    bug: 'save overwrites whatever revision is stored',
    caughtBy: [
      { spec: 'store', test: 'save with a stale revision fails with conflict and writes nothing' },
      {
        spec: 'concurrency',
        test: '8 saves racing on one base revision: exactly one wins, 7 conflict',
      },
    ],
    override: (inner) => ({
      async save(session: Session) {
        // Reads the stored revision right before writing, so every writer "matches".
        const stored = inner.backend.records.get(session.id)?.header.revision;
        return inner.save({
          ...session,
          revision: typeof stored === 'number' ? stored : session.revision,
        });
      },
    }),
  },
  {
    name: 'lost-concurrent-appends',
    bug: 'commit reads the history, yields, then writes history + new messages back',
    caughtBy: [
      {
        spec: 'concurrency',
        test: '8 writers x 50 unconditional appends: all 400 messages present once each',
      },
    ],
    override: (inner) => ({
      async commit(id, input) {
        if (
          !input.append ||
          input.expectedRevision !== undefined ||
          input.expectedMessageCount !== undefined
        ) {
          return inner.commit(id, input);
        }
        const before = await inner.loadMessages(id);
        await tick();
        const { append, ...rest } = input;
        return inner.commit(id, { ...rest, replace: [...before, ...append] });
      },
    }),
  },
  {
    name: 'listing-reads-messages',
    bug: 'list loads every session to count its messages',
    caughtBy: [{ spec: 'store', test: 'listing reads no message bodies' }],
    override: (inner) => ({
      async list(options?: ListOptions) {
        const page = await inner.list(options);
        for (const s of page) s.messageCount = (await inner.load(s.id)).messages.length;
        return page;
      },
    }),
  },
  {
    name: 'merge-without-divergence-check',
    bug: 'merge overwrites the parent even when it moved past the branch point',
    caughtBy: [
      {
        spec: 'brancher',
        test: 'merge into a parent that moved on fails with merge_diverged and writes nothing',
      },
    ],
    override: (inner) => ({
      async merge(childId: string) {
        const child = await inner.load(childId);
        if (!child.parentId) return inner.merge(childId);
        const parent = await inner.load(child.parentId);
        return inner.save({
          ...parent,
          messages: child.messages,
          tokenCount: child.tokenCount,
          costUsd: child.costUsd,
          turnCount: child.turnCount,
        });
      },
    }),
  },
  {
    name: 'status-without-size-cap',
    bug: 'runtime status of any size is stored',
    caughtBy: [
      {
        spec: 'runtime-status',
        test: 'exactly 2 MiB is accepted and one byte more is too_large with nothing written',
      },
    ],
    override: (inner) => ({
      async saveRuntimeStatus(id: string, status: JsonValue) {
        await inner.loadRuntimeStatus(id); // existence and id checks only
        const record = inner.backend.records.get(id)!;
        record.runtimeStatus = JSON.stringify(status);
      },
    }),
  },
  {
    name: 'delete-orphans-children',
    bug: 'delete removes the session but leaves its children pointing at it',
    caughtBy: [
      { spec: 'store', test: 'delete promotes children to the grandparent' },
      { spec: 'store', test: 'delete of a root promotes its children to roots' },
    ],
    override: (inner) => ({
      async delete(id: string) {
        const record = inner.backend.records.get(id);
        if (!record) return inner.delete(id);
        inner.backend.records.delete(id);
        inner.backend.index.delete(id);
        const parentId = record.header.parentId;
        if (parentId) inner.backend.childrenOf.get(parentId)?.delete(id);
      },
    }),
  },
  {
    name: 'torn-history-reads',
    bug: 'loadMessages copies the history in chunks, yielding between them',
    caughtBy: [
      { spec: 'history-reader', test: 'loadMessages is never torn by concurrent commits' },
    ],
    override: (inner) => ({
      async loadMessages(id: string) {
        const out: unknown[] = [];
        for (let i = 0; ; i += 4) {
          const snapshot = await inner.loadMessages(id);
          if (i >= snapshot.length) return out as never;
          out.push(...snapshot.slice(i, i + 4));
          await tick();
        }
      },
    }),
  },
  {
    name: 'paging-by-position',
    bug: 'startAfter is turned into an offset: the cursor id is looked up in the current order',
    caughtBy: [
      {
        spec: 'concurrency',
        test: 'keyset paging stays exact while another writer updates unseen sessions',
      },
    ],
    override: (inner) => ({
      async list(options: ListOptions = {}) {
        const { startAfter, limit, offset, ...rest } = options;
        if (!startAfter) return inner.list(options);
        const all = await inner.list({ ...rest, limit: 1000 });
        const at = all.findIndex((s) => s.id === startAfter.id);
        return all.slice(at + 1, at + 1 + (limit || 50));
      },
    }),
  },
  {
    name: 'router-ignores-follow',
    bug: 'follow is accepted but never stored, so resolve only sees bindings',
    caughtBy: [
      {
        spec: 'session-router',
        test: 'follow "tui" tracks the live session, a pin wins, "" clears',
      },
    ],
    override: (inner) => ({
      async follow(channel: string, chatKey: string, _target: string) {
        await inner.follow(channel, chatKey, '');
      },
    }),
  },
  {
    name: 'event-sequence-race',
    bug: 'append reads the last sequence, yields, then writes last + 1',
    caughtBy: [{ spec: 'event-log', test: 'sequences stay gapless under concurrent appends' }],
    override: (inner) => ({
      async append(id: string, type: string, payload: JsonValue = null) {
        await inner.events(id); // existence and id checks
        const record = inner.backend.records.get(id)!;
        const last = record.events.at(-1)?.sequence ?? 0;
        await tick();
        const event = {
          sequence: last + 1,
          revision: record.header.revision,
          at: new Date(),
          type,
          payload: structuredClone(payload),
        };
        record.events.push(event);
        return structuredClone(event);
      },
    }),
  },
  {
    name: 'enforce-max-prunes-sub-sessions',
    bug: 'enforceMax counts and deletes sub-sessions like roots',
    caughtBy: [
      {
        spec: 'pruner',
        test: 'enforceMax never selects sub-sessions and promotes the children of pruned roots',
      },
    ],
    override: (inner) => ({
      async enforceMax(max: number) {
        if (max <= 0) return inner.enforceMax(max);
        const all = await inner.list({ includeArchived: true, limit: 1000 });
        let deleted = 0;
        for (const s of all.slice(max)) {
          await inner.delete(s.id).then(
            () => deleted++,
            () => {},
          );
        }
        return deleted;
      },
    }),
  },
  {
    name: 'ids-sanitised-not-rejected',
    bug: 'create replaces characters it does not like instead of rejecting the id',
    caughtBy: [
      { spec: 'bad-input', test: 'rejects create with an id containing a path traversal "../x"' },
    ],
    override: (inner) => ({
      async create(session: SessionInput) {
        if (typeof session.id === 'string' && !isValidId(session.id)) {
          const cleaned =
            String(session.id)
              .replace(/[^A-Za-z0-9_-]/g, '_')
              .slice(0, 128) || '_';
          return inner.create({ ...session, id: cleaned });
        }
        return inner.create(session);
      },
    }),
  },
  {
    name: 'shared-load-results',
    bug: 'load returns a cached object, so a caller mutating it changes what others read',
    caughtBy: [{ spec: 'store', test: 'load returns a caller-owned copy' }],
    override: (inner) => {
      const cache = new Map<string, { revision: number; session: Session }>();
      return {
        async load(id: string) {
          const fresh = await inner.load(id);
          const hit = cache.get(id);
          if (hit && hit.revision === fresh.revision) return hit.session;
          cache.set(id, { revision: fresh.revision, session: fresh });
          return fresh;
        },
      };
    },
  },
  {
    name: 'dates-truncated-to-seconds',
    bug: 'create stores timestamps with second precision',
    caughtBy: [{ spec: 'store', test: 'dates round-trip with millisecond precision' }],
    override: (inner) => ({
      async create(session: SessionInput) {
        const trunc = (d: Date | undefined) =>
          d ? new Date(Math.floor(d.getTime() / 1000) * 1000) : d;
        return inner.create({
          ...session,
          createdAt: trunc(session.createdAt),
          updatedAt: trunc(session.updatedAt),
        } as SessionInput);
      },
    }),
  },
  {
    name: 'children-lost-on-concurrent-branch',
    bug: 'branch rewrites the parent child list from a stale read',
    caughtBy: [{ spec: 'brancher', test: 'concurrent branches of one parent are all linked' }],
    override: (inner) => ({
      async branch(parentId: string, atTurn: number) {
        const before = childIds(inner.backend, parentId);
        await tick();
        const child = await inner.branch(parentId, atTurn);
        inner.backend.childrenOf.set(parentId, new Set([...before, child.id]));
        return child;
      },
    }),
  },
  ...CONTRACT_VARIANTS,
  ...V2_VARIANTS,
  ...KIT_VARIANTS,
  ...FRAMEWORK_VARIANTS,
  ...RULE_VARIANTS,
  ...COPY_AND_RACE_VARIANTS,
];
