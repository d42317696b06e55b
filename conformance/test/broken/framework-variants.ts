import type {
  CallOptions,
  CommitInput,
  CommitResult,
  Message,
  MessageWindowQuery,
  Session,
  SessionInput,
} from '@sessionkit/core';
import { isSessionKitError, SessionKitError } from '@sessionkit/core';
import { OperationLog } from '@sessionkit/core/adapter';
import type { MemoryStore } from '@sessionkit/memory';
import { putRecord } from '@sessionkit/memory';
import { tick } from './variant-helpers.js';
import type { BrokenVariant } from './variants.js';

/** The memory adapter's commit without the operation id (the variant keeps its own). */
function unnamed(input: CommitInput): CommitInput {
  const { operationId: _id, ...rest } = input;
  return rest;
}

/** Recomputes a record's search texts with `textOf` after each write (a wrong search rule). */
function searchedBy(textOf: (m: unknown) => string): BrokenVariant['override'] {
  return (inner) => {
    const reindex = (id: string) => {
      const record = inner.backend.records.get(id);
      if (!record) return;
      record.searchTexts = record.messages.map((m) => textOf(m).toLowerCase());
      putRecord(inner.backend, record);
    };
    return {
      async create(session: SessionInput) {
        const created = await inner.create(session);
        reindex(created.id);
        return created;
      },
      async commit(id: string, input: CommitInput) {
        const result = await inner.commit(id, input);
        reindex(id);
        return result;
      },
    };
  };
}

/** The text rule of the previous release: string content, `text`, and every `content[]` text. */
function previousRuleText(m: unknown): string {
  if (typeof m === 'string') return m;
  const o = m as { content?: unknown; text?: unknown };
  const out: string[] = [];
  if (typeof o.text === 'string') out.push(o.text);
  if (typeof o.content === 'string') out.push(o.content);
  else if (Array.isArray(o.content)) {
    for (const p of o.content) if (typeof p?.text === 'string') out.push(p.text);
  }
  return out.join('\n');
}

/** Every `text` anywhere in the message, whatever part it belongs to. */
function everyText(m: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') return;
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'text' && typeof x === 'string') out.push(x);
        else walk(x);
      }
    }
  };
  if (typeof m === 'string') return m;
  const o = m as { content?: unknown };
  if (typeof o.content === 'string') out.push(o.content);
  walk(m);
  return out.join('\n');
}

/**
 * Broken variants of the framework contract (operation ids, truncate, parts text), of
 * signals and of reading input once: one plausible bug each on the memory adapter.
 */
export const FRAMEWORK_VARIANTS: BrokenVariant[] = [
  {
    name: 'operation-id-ignored',
    bug: 'commit drops the operationId, so a retried commit applies again',
    caughtBy: [
      {
        spec: 'operations',
        test: 'a repeated operationId writes nothing and resolves with the first result',
      },
      {
        spec: 'truncate',
        test: 'truncate and operationId together: a repeated pop drops one message',
      },
    ],
    override: (inner) => ({
      commit: (id: string, input: CommitInput, call?: CallOptions) =>
        inner.commit(id, unnamed(input), call),
    }),
  },
  {
    name: 'operation-id-after-expectations',
    bug: 'a commit checks its expectations before looking up its operation id',
    caughtBy: [
      { spec: 'operations', test: 'the repeat is checked before expectations that no longer hold' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        if (input.expectedRevision !== undefined) {
          const { revision } = await inner.load(id);
          if (revision !== input.expectedRevision) {
            throw new SessionKitError('conflict', `[sessionkit/memory] session "${id}" changed`);
          }
        }
        return inner.commit(id, input, call);
      },
    }),
  },
  {
    name: 'operation-ids-per-instance',
    bug: 'operation ids are remembered by the store instance, not with the session',
    caughtBy: [
      { spec: 'operations', test: 'another store instance and a reopened one see the recorded id' },
      { spec: 'operations', test: 'concurrent commits with one operation id apply once and agree' },
    ],
    override: (inner) => {
      const seen = new Map<string, CommitResult>();
      return {
        async commit(id: string, input: CommitInput, call?: CallOptions) {
          const key = `${id}\u0000${input.operationId}`;
          const known = input.operationId === undefined ? undefined : seen.get(key);
          if (known) return known;
          const result = await inner.commit(id, unnamed(input), call);
          if (input.operationId !== undefined) seen.set(key, result);
          return result;
        },
      };
    },
  },
  {
    name: 'operation-ids-forgotten-early',
    bug: 'a session remembers only its last 100 operation ids',
    caughtBy: [
      { spec: 'operations', test: 'the last 1000 operation ids of a session are remembered' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const result = await inner.commit(id, input, call);
        const record = inner.backend.records.get(id);
        if (record && record.operations.size > 100) {
          const fresh = new OperationLog(100);
          for (const [op, r] of record.operations.entries()) fresh.record(op, r);
          record.operations = fresh;
        }
        return result;
      },
    }),
  },
  {
    name: 'operation-id-lookup-then-write',
    bug: 'commit looks up the operation id, yields, then writes (not one atomic step)',
    caughtBy: [
      { spec: 'operations', test: 'concurrent commits with one operation id apply once and agree' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const op = input.operationId;
        const known =
          op === undefined ? undefined : inner.backend.records.get(id)?.operations.find(op);
        if (known) return known;
        await tick();
        const result = await inner.commit(id, unnamed(input), call);
        if (op !== undefined) inner.backend.records.get(id)?.operations.record(op, result);
        return result;
      },
    }),
  },
  {
    name: 'operation-ids-outlive-delete',
    bug: 'operation ids are kept by session id across a delete and a re-create',
    caughtBy: [
      {
        spec: 'operations',
        test: 'a deleted and recreated session remembers none of its former ids',
      },
    ],
    override: (inner) => ({
      async delete(id: string, call?: CallOptions) {
        const ops = inner.backend.records.get(id)?.operations;
        await inner.delete(id, call);
        (inner as unknown as { kept?: Map<string, unknown> }).kept ??= new Map();
        if (ops) (inner as unknown as { kept: Map<string, unknown> }).kept.set(id, ops);
      },
      async create(session: SessionInput, call?: CallOptions) {
        const created = await inner.create(session, call);
        const kept = (inner as unknown as { kept?: Map<string, typeof created> }).kept?.get(
          created.id,
        );
        const record = inner.backend.records.get(created.id);
        if (kept && record) record.operations = kept as never;
        return created;
      },
    }),
  },
  {
    name: 'truncate-clamped',
    bug: 'a truncate past the history is clamped to the message count instead of rejected',
    caughtBy: [
      {
        spec: 'truncate',
        test: 'truncate past the history is invalid_argument and writes nothing',
      },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const count = inner.backend.records.get(id)?.messages.length;
        if (typeof input.truncate === 'number' && count !== undefined && input.truncate > count) {
          return inner.commit(id, { ...input, truncate: count }, call);
        }
        return inner.commit(id, input, call);
      },
    }),
  },
  {
    name: 'truncate-not-a-rewrite',
    bug: 'a truncate that drops messages is not counted as a history rewrite',
    caughtBy: [
      {
        spec: 'truncate',
        test: 'dropping a message is a history rewrite: a branch taken before it no longer merges',
      },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const lineage = structuredClone(inner.backend.records.get(id)?.lineage);
        const result = await inner.commit(id, input, call);
        const record = inner.backend.records.get(id);
        if (record && input.truncate !== undefined) record.lineage = lineage;
        return result;
      },
    }),
  },
  {
    name: 'truncate-in-two-steps',
    bug: 'truncate drops the tail in one commit and appends in another',
    caughtBy: [
      {
        spec: 'truncate',
        test: 'truncate keeps the first n messages, then appends, in one commit',
      },
      {
        spec: 'truncate',
        test: 'windows and loadMessages are never torn by concurrent truncations',
      },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        if (input.truncate === undefined || !input.append?.length)
          return inner.commit(id, input, call);
        const { append, ...rest } = input;
        await inner.commit(id, rest, call);
        await tick();
        return inner.commit(id, { append }, call);
      },
    }),
  },
  {
    name: 'truncate-leaves-search-text',
    bug: 'truncate drops the messages but keeps their search text',
    caughtBy: [
      { spec: 'truncate', test: 'search follows truncation: dropped text is no longer found' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const before = inner.backend.records.get(id)?.searchTexts.slice() ?? [];
        const result = await inner.commit(id, input, call);
        const record = inner.backend.records.get(id);
        if (record && input.truncate !== undefined) {
          record.searchTexts = [...before.slice(input.truncate), ...record.searchTexts];
          putRecord(inner.backend, record);
        }
        return result;
      },
    }),
  },
  {
    name: 'parts-not-searched',
    bug: 'search reads the previous release rule only (no parts[], no content.parts[])',
    caughtBy: [
      {
        spec: 'search',
        test: 'query reads parts: parts[], content.parts[], typed content parts, OpenAI items',
      },
    ],
    override: searchedBy(previousRuleText),
  },
  {
    name: 'every-text-searched',
    bug: 'search reads the text of every part, reasoning and tool output included',
    caughtBy: [
      {
        spec: 'search',
        test: 'query reads parts: parts[], content.parts[], typed content parts, OpenAI items',
      },
    ],
    override: searchedBy(everyText),
  },
  {
    name: 'lone-surrogate-kept-in-search',
    bug: 'search text keeps lone surrogates instead of reading them as U+FFFD',
    caughtBy: [{ spec: 'search', test: 'a lone surrogate in a message is searched as U+FFFD' }],
    override: searchedBy((m) => ((m as Message).content as string) ?? ''),
  },
  {
    name: 'signal-ignored',
    bug: 'the trailing call options are dropped, so an aborted signal changes nothing',
    caughtBy: [
      {
        spec: 'signal',
        test: 'a write whose signal is already aborted is `aborted` and writes nothing',
      },
      { spec: 'signal', test: 'a read whose signal is already aborted is `aborted`' },
    ],
    override: (inner) => ({
      create: (s: SessionInput) => inner.create(s),
      save: (s: Session) => inner.save(s),
      load: (id: string) => inner.load(id),
      commit: (id: string, input: CommitInput) => inner.commit(id, input),
      branch: (id: string, at: number) => inner.branch(id, at),
    }),
  },
  {
    name: 'signal-checked-after-the-write',
    bug: 'a write checks its signal after it landed and reports `aborted`',
    caughtBy: [{ spec: 'signal', test: 'a commit aborted mid-way never leaves half a turn' }],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        const result = await inner.commit(id, input);
        await tick();
        if (call?.signal?.aborted) {
          throw new SessionKitError('aborted', `[sessionkit/memory] commit of "${id}" was aborted`);
        }
        return result;
      },
    }),
  },
  {
    name: 'input-read-twice',
    bug: 'commit validates a serialised copy of its input, then stores the input itself',
    caughtBy: [
      { spec: 'input', test: 'a commit stores exactly the value it validated, read once' },
    ],
    override: (inner) => ({
      async commit(id: string, input: CommitInput, call?: CallOptions) {
        JSON.stringify(input); // "validation" reads every getter once …
        return inner.commit(id, input, call); // … and the store reads them again
      },
    }),
  },
  {
    name: 'create-without-text-caps',
    bug: 'create stores a title of any length (the cap is checked on save and commit only)',
    caughtBy: [{ spec: 'value-limits', test: 'rejects create with a title of 4097 chars' }],
    override: (inner) => ({
      async create(session: SessionInput, call?: CallOptions) {
        const title = session.title;
        const created = await inner.create({ ...session, title: '' }, call);
        const record = inner.backend.records.get(created.id);
        if (record && title !== undefined) {
          record.header = { ...record.header, title };
          putRecord(inner.backend, record);
        }
        return { ...created, title: title ?? '' };
      },
    }),
  },
  {
    name: 'window-error-unnamed',
    bug: 'a bad window is rejected with a message that does not say what is wrong',
    caughtBy: [
      { spec: 'message-window', test: 'a bad window is invalid_argument naming what is wrong' },
    ],
    override: (inner: MemoryStore) => ({
      async loadMessages(id: string, window?: MessageWindowQuery, call?: CallOptions) {
        try {
          return await inner.loadMessages(id, window, call);
        } catch (e) {
          if (isSessionKitError(e, 'invalid_argument')) {
            throw new SessionKitError('invalid_argument', '[sessionkit/memory] bad window');
          }
          throw e;
        }
      },
    }),
  },
];
