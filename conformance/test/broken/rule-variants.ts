import {
  type CallOptions,
  type CommitInput,
  isSessionKitError,
  type ListOptions,
  MAX_DATE_MS,
  MAX_SHORT_TEXT_LENGTH,
  type Message,
  type MessageWindowQuery,
  messageText,
  type Session,
  type SessionInput,
  type SessionSummary,
} from '@sessionkit/core';
import type { MemoryStore } from '@sessionkit/memory';
import { recordOf } from './variant-helpers.js';
import type { BrokenVariant } from './variants.js';

/** What an ASCII-only `LOWER()` (a C collation) makes of a text. */
const asciiLower = (t: string) => t.replace(/[A-Z]+/g, (c) => c.toLowerCase());

/** Whether `text` may be stored as a short text field: within its cap, no NUL or lone surrogate. */
const acceptableText = (text: string) =>
  text.length <= MAX_SHORT_TEXT_LENGTH &&
  !text.includes('\u0000') &&
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

/** Every summary `options` selects before paging (the store's own filters, no query). */
async function unpaged(inner: MemoryStore, options: ListOptions): Promise<SessionSummary[]> {
  const { limit: _limit, offset: _offset, startAfter: _after, ...rest } = options;
  return inner.list({ ...rest, limit: 1000 });
}

/** `found` with the summaries of `extra` not in it, newest first. */
function withExtra(found: SessionSummary[], extra: SessionSummary[]): SessionSummary[] {
  const ids = new Set(found.map((s) => s.id));
  const out = [...found, ...extra.filter((s) => !ids.has(s.id))];
  return out.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime());
}

/**
 * Broken variants for the rules DESIGN states that the suite checked only through random
 * sequences, or not at all: children's order and links, fields `save` keeps, creation time,
 * what search reads and folds, filter exactness, the text checks of a commit's patch, the
 * latest date, signals, `close`, operation ids of copies and what `enforceMax` deletes. Each
 * is one plausible bug on the memory adapter and names the tests that must fail.
 */
export const RULE_VARIANTS: BrokenVariant[] = [
  {
    name: 'children-in-locale-order',
    bug: 'children sorted with localeCompare ("a" before "B"), not in byte order',
    caughtBy: [
      { spec: 'store', test: 'children are every child, in byte order, whenever and however made' },
    ],
    override: (inner) => ({
      async load(id: string, call?: CallOptions) {
        const s = await inner.load(id, call);
        return { ...s, children: [...s.children].sort((a, b) => a.localeCompare(b)) };
      },
    }),
  },
  {
    name: 'children-without-archived',
    bug: "a session's children leave out the archived ones",
    caughtBy: [
      { spec: 'store', test: 'children are every child, in byte order, whenever and however made' },
    ],
    override: (inner) => ({
      async load(id: string, call?: CallOptions) {
        const s = await inner.load(id, call);
        const live = s.children.filter(
          (c) => inner.backend.records.get(c)?.header.archivedAt === undefined,
        );
        return { ...s, children: live };
      },
    }),
  },
  {
    name: 'child-before-parent-unlinked',
    bug: 'a child created before its parent is never linked to it',
    caughtBy: [
      { spec: 'store', test: 'children are every child, in byte order, whenever and however made' },
    ],
    override: (inner) => ({
      async create(input: SessionInput, call?: CallOptions) {
        const parentId = input.parentId;
        const orphan = parentId !== undefined && !inner.backend.records.has(parentId);
        const s = await inner.create(input, call);
        if (orphan) inner.backend.childrenOf.get(parentId)?.delete(s.id);
        return s;
      },
    }),
  },
  {
    name: 'save-takes-branched-at-turn',
    bug: "save stores the caller's branchedAtTurn",
    caughtBy: [
      { spec: 'store', test: 'save ignores a given branchedAtTurn, as it ignores parentId' },
    ],
    override: (inner) => ({
      async save(session: Session, call?: CallOptions) {
        const saved = await inner.save(session, call);
        if (session.branchedAtTurn === undefined) return saved;
        recordOf(inner, session.id).header.branchedAtTurn = session.branchedAtTurn;
        return { ...saved, branchedAtTurn: session.branchedAtTurn };
      },
    }),
  },
  {
    name: 'created-at-now',
    bug: 'create without createdAt takes the current time, even before an older updatedAt',
    caughtBy: [
      { spec: 'store', test: 'without createdAt, an older updatedAt is the creation time' },
    ],
    override: (inner) => ({
      create: (input: SessionInput, call?: CallOptions) =>
        inner.create({ ...input, createdAt: input.createdAt ?? new Date() }, call),
    }),
  },
  {
    name: 'query-reads-other-fields',
    bug: 'search also matches the folder, status, model, provider, mode and metadata',
    caughtBy: [
      {
        spec: 'search',
        test: 'query never matches folder, status, model, provider, mode or metadata',
      },
    ],
    override: (inner) => ({
      async list(options: ListOptions = {}, call?: CallOptions) {
        const found = await inner.list(options, call);
        if (options.query === undefined || options.startAfter !== undefined) return found;
        const q = options.query.toLowerCase();
        const others = (await unpaged(inner, { ...options, query: undefined })).filter((s) =>
          [
            s.folder,
            s.status,
            s.model,
            s.provider,
            s.mode ?? '',
            ...Object.entries(s.metadata).flat(),
          ]
            .join('\n')
            .toLowerCase()
            .includes(q),
        );
        return withExtra(found, others);
      },
    }),
  },
  {
    name: 'query-folds-ascii-only',
    bug: 'search lower-cases only A–Z (a C-collation LOWER), so "ärger" misses "ÄRGER"',
    caughtBy: [{ spec: 'search', test: 'case folds beyond ASCII, in titles and in messages' }],
    override: (inner) => ({
      async list(options: ListOptions = {}, call?: CallOptions) {
        const found = await inner.list(options, call);
        if (options.query === undefined) return found;
        const q = asciiLower(options.query);
        return found.filter((s) => {
          const record = recordOf(inner, s.id);
          const texts = [s.title, ...record.messages.map((m) => messageText(m))];
          return texts.some((t) => asciiLower(t).includes(q));
        });
      },
    }),
  },
  {
    name: 'query-matches-nul-as-replacement',
    bug: 'a NUL in a message is searched as U+FFFD (as a text column that cannot hold NUL stores it)',
    caughtBy: [{ spec: 'search', test: 'a NUL in a message is never matched, not even as U+FFFD' }],
    override: (inner) => ({
      async list(options: ListOptions = {}, call?: CallOptions) {
        const found = await inner.list(options, call);
        const q = options.query?.toLowerCase();
        if (q === undefined || !q.includes('\uFFFD') || options.startAfter !== undefined)
          return found;
        const others = (await unpaged(inner, { ...options, query: undefined })).filter((s) =>
          recordOf(inner, s.id).messages.some((m) =>
            messageText(m).replaceAll('\u0000', '\uFFFD').toLowerCase().includes(q),
          ),
        );
        return withExtra(found, others);
      },
    }),
  },
  {
    name: 'filters-ignore-case',
    bug: 'folder and status filters compare case-insensitively (a MySQL default collation)',
    caughtBy: [{ spec: 'search', test: 'folder and status filters match exactly, case included' }],
    override: (inner) => ({
      async list(options: ListOptions = {}, call?: CallOptions) {
        // (Keyset pages are left correct: a page past the cursor would need its order.)
        if (
          (options.folder === undefined && options.status === undefined) ||
          options.startAfter !== undefined
        ) {
          return inner.list(options, call);
        }
        const { folder, status } = options;
        const all = await unpaged(inner, { ...options, folder: undefined, status: undefined });
        const same = (a: string, b: string | undefined) =>
          b === undefined || a.toLowerCase() === b.toLowerCase();
        const hits = all.filter((s) => same(s.folder, folder) && same(s.status, status));
        const offset = options.offset ?? 0;
        return hits.slice(offset, offset + (options.limit ?? 50));
      },
    }),
  },
  {
    name: 'patch-negative-zero-kept',
    bug: 'a commit patching a counter to -0 stores -0',
    caughtBy: [{ spec: 'value-limits', test: 'a commit patching counters to -0 stores 0' }],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const r = await inner.commit(id, input, call);
        const header = recordOf(inner, id).header;
        for (const field of ['tokenCount', 'costUsd', 'turnCount'] as const) {
          if (Object.is(input.patch?.[field], -0)) header[field] = -0;
        }
        return r;
      },
    }),
  },
  {
    name: 'turn-count-increment-unchecked',
    bug: 'a turnCount increment is added without checking the result stays a safe integer',
    caughtBy: [
      {
        spec: 'value-limits',
        test: 'rejects an increment that takes turnCount past MAX_SAFE_INTEGER',
      },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const turns = input.increment?.turnCount;
        if (turns === undefined) return inner.commit(id, input, call);
        const { turnCount: _t, ...increment } = input.increment ?? {};
        const r = await inner.commit(id, { ...input, increment }, call);
        recordOf(inner, id).header.turnCount += turns;
        return r;
      },
    }),
  },
  {
    name: 'patch-mode-unchecked',
    bug: "a commit's patch.mode is stored without the text checks (cap, NUL, lone surrogates)",
    caughtBy: [
      { spec: 'value-limits', test: 'rejects a commit patching mode over its cap' },
      { spec: 'value-limits', test: 'rejects a commit patching mode with NUL' },
      { spec: 'value-limits', test: 'rejects a commit patching mode with a lone surrogate' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const mode = input.patch?.mode;
        if (typeof mode !== 'string' || acceptableText(mode)) return inner.commit(id, input, call);
        const { mode: _m, ...patch } = input.patch ?? {};
        const r = await inner.commit(id, { ...input, patch }, call);
        recordOf(inner, id).header.mode = mode;
        return r;
      },
    }),
  },
  {
    name: 'router-thread-cut',
    bug: 'bind cuts a thread past the cap to its first 1,024 characters instead of rejecting it',
    caughtBy: [{ spec: 'value-limits', test: 'rejects bind with a thread over its cap' }],
    override: (inner) => ({
      bind: (channel: string, chatKey: string, thread: string, id: string) =>
        inner.bind(channel, chatKey, thread.slice(0, MAX_SHORT_TEXT_LENGTH), id),
    }),
  },
  {
    name: 'latest-date-overflows',
    bug: 'a write at the latest date stores year 10000 instead of refusing it',
    caughtBy: [
      {
        spec: 'value-limits',
        test: 'a commit to a session last written at the latest date is refused, nothing written',
      },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        try {
          return await inner.commit(id, input, call);
        } catch (e) {
          const header = inner.backend.records.get(id)?.header;
          if (
            !isSessionKitError(e, 'invalid_argument') ||
            header?.updatedAt.getTime() !== MAX_DATE_MS
          )
            throw e;
          header.updatedAt = new Date(MAX_DATE_MS + 1);
          header.revision += 1;
          return { revision: header.revision, messageCount: 0, updatedAt: header.updatedAt };
        }
      },
    }),
  },
  {
    name: 'merge-ignores-signal',
    bug: 'merge drops its call options, so an aborted signal does not stop it',
    caughtBy: [
      {
        spec: 'signal',
        test: 'a merge whose signal is already aborted is `aborted` and writes nothing',
      },
    ],
    override: (inner) => ({ merge: (childId: string) => inner.merge(childId) }),
  },
  {
    name: 'status-read-ignores-signal',
    bug: 'loadRuntimeStatus drops its call options',
    caughtBy: [{ spec: 'signal', test: 'a read whose signal is already aborted is `aborted`' }],
    override: (inner) => ({ loadRuntimeStatus: (id: string) => inner.loadRuntimeStatus(id) }),
  },
  {
    name: 'window-after-close',
    bug: 'a windowed loadMessages is served from memory after close()',
    caughtBy: [{ spec: 'store', test: 'close is idempotent and later calls fail with closed' }],
    override: (inner) => ({
      async loadMessages(id: string, window?: MessageWindowQuery, call?: CallOptions) {
        try {
          return await inner.loadMessages(id, window, call);
        } catch (e) {
          const record = inner.backend.records.get(id);
          if (!isSessionKitError(e, 'closed') || window === undefined || !record) throw e;
          return structuredClone(record.messages.slice(-(window.last ?? 0))) as Message[];
        }
      },
    }),
  },
  {
    name: 'clone-keeps-operation-ids',
    bug: "clone copies the source's recent operation ids, so the copy drops a commit naming one",
    caughtBy: [
      {
        spec: 'operations',
        test: 'a clone or a branch is a new session: it holds none of the source ids',
      },
    ],
    override: (inner) => ({
      async clone(id: string, call?: CallOptions) {
        const copy = await inner.clone(id, call);
        const target = recordOf(inner, copy.id).operations;
        for (const [op, result] of recordOf(inner, id).operations.entries())
          target.record(op, result);
        return copy;
      },
    }),
  },
  {
    name: 'prune-keeps-router-rows',
    bug: 'enforceMax deletes sessions but leaves their bindings and pins',
    caughtBy: [
      {
        spec: 'pruner',
        test: 'enforceMax deletes as delete does: bindings, pins, status and events go too',
      },
    ],
    override: (inner) => ({
      async enforceMax(max: number, call?: CallOptions) {
        const bindings = new Map(inner.backend.bindings);
        const follows = new Map(inner.backend.follows);
        const deleted = await inner.enforceMax(max, call);
        for (const [k, v] of bindings) inner.backend.bindings.set(k, v);
        for (const [k, v] of follows) inner.backend.follows.set(k, v);
        return deleted;
      },
    }),
  },
];
