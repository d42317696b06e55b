import {
  type Capability,
  detectCapabilities,
  type ErrorCode,
  type FullStore,
  isEventLog,
  isRuntimeStatusStore,
  isSessionRouter,
  type Session,
  type Store,
} from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { expectCode, listAll, msg, turns } from './util.js';

/** The session a bad-input case runs against, and its folder. */
export interface Seed {
  session: Session;
  folder: string;
}

/** One call that must be rejected (`invalid_argument` unless `code`) and change nothing. */
export interface BadInput {
  name: string;
  capability: 'Store' | Capability;
  code?: ErrorCode;
  call(store: FullStore, seed: Seed): Promise<unknown>;
}

const cycle = (): unknown => {
  const o: Record<string, unknown> = { role: 'user' };
  o.self = o;
  return o;
};

const BAD_IDS: [string, unknown][] = [
  ['a path traversal "../x"', '../x'],
  ['a slash "a/b"', 'a/b'],
  ['a NUL byte', 'a\u0000b'],
  ['129 characters', 'a'.repeat(129)],
  ['the empty string', ''],
  ['a leading dot', '.hidden'],
  ['a glob "*"', '*'],
  ['a hash tag "{x}"', '{x}'],
  ['a space', 'a b'],
  ['a non-ASCII letter', 'sessión'],
  ['a number instead of a string', 42],
  ['a backslash', 'a\\b'],
];

const CASES: BadInput[] = [
  ...BAD_IDS.map(
    ([what, id]): BadInput => ({
      name: `create with an id containing ${what}`,
      capability: 'Store',
      call: (s, seed) => s.create({ id: id as string, folder: seed.folder }),
    }),
  ),
  { name: 'load of "../etc/passwd"', capability: 'Store', call: (s) => s.load('../etc/passwd') },
  { name: 'delete of "a/b"', capability: 'Store', call: (s) => s.delete('a/b') },
  {
    name: 'save with an id of 129 chars',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, id: 'x'.repeat(129) }),
  },
  {
    name: 'list with parentId "../x"',
    capability: 'Store',
    call: (s) => s.list({ parentId: '../x' }),
  },
  {
    name: 'commit to "*"',
    capability: 'Committer',
    call: (s) => s.commit('*', { append: turns(1) }),
  },
  { name: 'branch of "a\\u0000b"', capability: 'Brancher', call: (s) => s.branch('a\u0000b', 0) },
  { name: 'loadMessages of ".."', capability: 'HistoryReader', call: (s) => s.loadMessages('..') },
  {
    name: 'saveRuntimeStatus for "a/../b"',
    capability: 'RuntimeStatusStore',
    call: (s) => s.saveRuntimeStatus('a/../b', {}),
  },
  {
    name: 'event append to "{id}"',
    capability: 'EventLog',
    call: (s) => s.append('{id}', 'x', {}),
  },
  {
    name: 'bind to session "a b"',
    capability: 'SessionRouter',
    call: (s) => s.bind('telegram', 'c', '', 'a b'),
  },
  {
    name: 'follow a target "../x"',
    capability: 'SessionRouter',
    call: (s) => s.follow('telegram', 'c', '../x'),
  },
  // Values JSON cannot hold.
  {
    name: 'create with a function in a message',
    capability: 'Store',
    call: (s, seed) =>
      s.create({
        id: 'bad-fn',
        folder: seed.folder,
        messages: [{ role: 'user', content: 'x', fn: () => 1 } as never],
      }),
  },
  {
    name: 'create with a BigInt in state',
    capability: 'Store',
    call: (s, seed) =>
      s.create({ id: 'bad-bigint', folder: seed.folder, state: { n: 10n } as never }),
  },
  {
    name: 'create with a cyclic message',
    capability: 'Store',
    call: (s, seed) =>
      s.create({ id: 'bad-cycle', folder: seed.folder, messages: [cycle() as never] }),
  },
  {
    name: 'save with NaN in a message',
    capability: 'Store',
    call: (s, { session }) =>
      s.save({ ...session, messages: [{ role: 'user', content: 'x', n: Number.NaN } as never] }),
  },
  {
    name: 'save with undefined inside the messages array',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, messages: [undefined as never] }),
  },
  {
    name: 'commit appending a Date inside a message',
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, { append: [{ role: 'user', content: 'x', at: new Date() } as never] }),
  },
  {
    name: 'commit appending a Map',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { append: [new Map() as never] }),
  },
  {
    name: 'commit with a symbol in state',
    capability: 'Committer',
    call: (s, { session }) =>
      s.commit(session.id, { patch: { state: { s: Symbol('x') } as never } }),
  },
  {
    name: 'runtime status holding a BigInt',
    capability: 'RuntimeStatusStore',
    call: (s, { session }) => s.saveRuntimeStatus(session.id, { n: 1n } as never),
  },
  {
    name: 'runtime status holding a cycle',
    capability: 'RuntimeStatusStore',
    call: (s, { session }) => s.saveRuntimeStatus(session.id, cycle() as never),
  },
  {
    name: 'event payload holding a function',
    capability: 'EventLog',
    call: (s, { session }) => s.append(session.id, 'x', { f: () => 1 } as never),
  },
  {
    name: 'event payload of Infinity',
    capability: 'EventLog',
    call: (s, { session }) => s.append(session.id, 'x', Number.POSITIVE_INFINITY),
  },
  // Limits and numbers.
  {
    name: 'list with limit -1',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, limit: -1 }),
  },
  {
    name: 'list with limit 1001',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, limit: 1001 }),
  },
  {
    name: 'list with limit 2.5',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, limit: 2.5 }),
  },
  {
    name: 'list with a string limit',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, limit: '10' as never }),
  },
  {
    name: 'list with offset -1',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, offset: -1 }),
  },
  {
    name: 'list with an invalid after date',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, after: new Date(Number.NaN) }),
  },
  {
    name: 'list with a cursor missing its date',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, startAfter: { id: 'x' } as never }),
  },
  { name: 'recent with limit -5', capability: 'SessionRouter', call: (s) => s.recent(-5) },
  {
    name: 'events with limit 0',
    capability: 'EventLog',
    call: (s, { session }) => s.events(session.id, { limit: 0 }),
  },
  {
    name: 'events after sequence -1',
    capability: 'EventLog',
    call: (s, { session }) => s.events(session.id, { afterSequence: -1 }),
  },
  { name: 'enforceMax of 1.5', capability: 'Pruner', call: (s) => s.enforceMax(1.5) },
  {
    name: 'branch at turn -1',
    capability: 'Brancher',
    call: (s, { session }) => s.branch(session.id, -1),
  },
  {
    name: 'branch past the last message',
    capability: 'Brancher',
    call: (s, { session }) => s.branch(session.id, session.messages.length + 1),
  },
  {
    name: 'save with revision 0',
    capability: 'Store',
    call: (s, { session }) => s.save({ ...session, revision: 0 }),
  },
  {
    name: 'create with a negative tokenCount',
    capability: 'Store',
    call: (s, seed) => s.create({ id: 'neg-tokens', folder: seed.folder, tokenCount: -1 }),
  },
  {
    name: 'create with an invalid createdAt',
    capability: 'Store',
    call: (s, seed) =>
      s.create({ id: 'bad-date', folder: seed.folder, createdAt: new Date('nope') }),
  },
  {
    name: 'create with a non-string metadata value',
    capability: 'Store',
    call: (s, seed) =>
      s.create({ id: 'bad-meta', folder: seed.folder, metadata: { n: 1 } as never }),
  },
  {
    name: 'create with a NUL in the title',
    capability: 'Store',
    call: (s, seed) => s.create({ id: 'nul-title', folder: seed.folder, title: 'a\u0000b' }),
  },
  {
    name: 'create with a lone surrogate in the title',
    capability: 'Store',
    call: (s, seed) => s.create({ id: 'surrogate-title', folder: seed.folder, title: 'a\ud83db' }),
  },
  {
    name: 'commit patching a metadata value with a lone surrogate',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { patch: { metadata: { k: '\udc00' } } }),
  },
  {
    name: 'create as its own parent',
    capability: 'Store',
    call: (s, seed) =>
      s.create({ id: 'self-parent', folder: seed.folder, parentId: 'self-parent' }),
  },
  // Unknown options and contradictions.
  {
    name: 'list with an unknown option',
    capability: 'Store',
    call: (s, { folder }) => s.list({ folder, sortBy: 'title' } as never),
  },
  {
    name: 'create with an unknown field',
    capability: 'Store',
    call: (s, seed) =>
      s.create({ id: 'unknown-field', folder: seed.folder, colour: 'red' } as never),
  },
  {
    name: 'commit with an unknown option',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { append: [], force: true } as never),
  },
  {
    name: 'commit patching parentId',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { patch: { parentId: 'x' } as never }),
  },
  {
    name: 'commit with both append and replace',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { append: turns(1), replace: [] }),
  },
  {
    name: 'commit with expectedRevision 0',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { expectedRevision: 0, append: turns(1) }),
  },
  {
    name: 'commit with a non-array append',
    capability: 'Committer',
    call: (s, { session }) => s.commit(session.id, { append: msg('user', 'x') as never }),
  },
  {
    name: 'event with an empty type',
    capability: 'EventLog',
    call: (s, { session }) => s.append(session.id, '', {}),
  },
  {
    name: 'bind with an empty channel',
    capability: 'SessionRouter',
    call: (s, { session }) => s.bind('', 'c', '', session.id),
  },
];

/** Every method that takes a session id, called with `id` in that place. */
const ID_SWEEP: {
  method: string;
  capability: 'Store' | Capability;
  call(s: FullStore, id: string, seed: Seed): Promise<unknown>;
}[] = [
  { method: 'load', capability: 'Store', call: (s, id) => s.load(id) },
  { method: 'save', capability: 'Store', call: (s, id, { session }) => s.save({ ...session, id }) },
  { method: 'delete', capability: 'Store', call: (s, id) => s.delete(id) },
  {
    method: 'list (parentId)',
    capability: 'Store',
    call: (s, id, { folder }) => s.list({ folder, parentId: id }),
  },
  {
    method: 'commit',
    capability: 'Committer',
    call: (s, id) => s.commit(id, { append: turns(1) }),
  },
  { method: 'branch', capability: 'Brancher', call: (s, id) => s.branch(id, 0) },
  { method: 'clone', capability: 'Brancher', call: (s, id) => s.clone(id) },
  { method: 'merge', capability: 'Brancher', call: (s, id) => s.merge(id) },
  { method: 'loadMessages', capability: 'HistoryReader', call: (s, id) => s.loadMessages(id) },
  {
    method: 'saveRuntimeStatus',
    capability: 'RuntimeStatusStore',
    call: (s, id) => s.saveRuntimeStatus(id, { a: 1 }),
  },
  {
    method: 'loadRuntimeStatus',
    capability: 'RuntimeStatusStore',
    call: (s, id) => s.loadRuntimeStatus(id),
  },
  { method: 'append', capability: 'EventLog', call: (s, id) => s.append(id, 'x', {}) },
  { method: 'events', capability: 'EventLog', call: (s, id) => s.events(id) },
  {
    method: 'bind (sessionId)',
    capability: 'SessionRouter',
    call: (s, id) => s.bind('telegram', 'c', '', id),
  },
  {
    method: 'follow (target)',
    capability: 'SessionRouter',
    call: (s, id) => s.follow('telegram', 'c', id),
  },
];

const CREATED_BY_MISTAKE = [
  'bad-fn',
  'bad-bigint',
  'bad-cycle',
  'neg-tokens',
  'bad-date',
  'bad-meta',
  'nul-title',
  'self-parent',
  'unknown-field',
];

/** Seeds a session (with status, an event and a binding where supported). */
export async function seedStore(store: FullStore, id: string, folder: string): Promise<Seed> {
  const session = await store.create({ id, folder, title: 'seed', messages: turns(2) });
  const caps = new Set(detectCapabilities(store));
  if (caps.has('RuntimeStatusStore')) await store.saveRuntimeStatus(session.id, { seeded: true });
  if (caps.has('EventLog')) await store.append(session.id, 'seeded', { n: 1 });
  if (caps.has('SessionRouter')) await store.bind('telegram', 'seed-chat', '', session.id);
  return { session, folder };
}

/**
 * Everything observable about the seed and its folder, to prove nothing was written;
 * `ids` are sessions a bad case might have created by mistake.
 */
export async function observe(
  store: Store,
  seed: Seed,
  ids: readonly string[] = CREATED_BY_MISTAKE,
): Promise<string> {
  const caps = store as Partial<FullStore>;
  const parts: unknown[] = [
    await listAll(store, seed.folder, { includeArchived: true }),
    await store.load(seed.session.id),
  ];
  for (const id of ids) {
    parts.push(
      await store.load(id).then(
        () => `${id} exists`,
        () => null,
      ),
    );
  }
  if (isRuntimeStatusStore(caps)) parts.push(await caps.loadRuntimeStatus(seed.session.id));
  if (isEventLog(caps)) parts.push(await caps.events(seed.session.id));
  if (isSessionRouter(caps)) parts.push(await caps.recent(1000));
  return JSON.stringify(parts);
}

/** Bad input: each case is rejected with the right code and changes nothing. */
export const badInputSpec = defineSpec('bad-input', 'Store', (t) => {
  if (CASES.length < 30) throw new Error('the bad-input spec must hold at least 30 cases');
  for (const c of CASES) {
    t.testFor(c.capability, `rejects ${c.name}`, async (ctx) => {
      const store = ctx.store as FullStore;
      const seed = await seedStore(store, ctx.id(), ctx.folder());
      const before = await observe(store, seed);
      await expectCode(c.call(store, seed), c.code ?? 'invalid_argument');
      expect(await observe(store, seed)).toBe(before);
    });
  }
});

/** Every method that takes an id rejects every malformed id, before any I/O. */
export const badIdSweepSpec = defineSpec('bad-input', 'Store', (t) => {
  for (const m of ID_SWEEP) {
    t.testFor(m.capability, `${m.method} rejects every malformed id`, async (ctx) => {
      const store = ctx.store as FullStore;
      const seed = await seedStore(store, ctx.id(), ctx.folder());
      const before = await observe(store, seed);
      for (const [what, id] of BAD_IDS) {
        // An empty follow target is valid: it clears follow mode.
        if (m.method === 'follow (target)' && id === '') continue;
        await expectCode(m.call(store, id as string, seed), 'invalid_argument').catch(
          (e: unknown) => {
            throw new Error(
              `${m.method} with an id containing ${what}: ${e instanceof Error ? e.message : String(e)}`,
            );
          },
        );
      }
      expect(await observe(store, seed)).toBe(before);
    });
  }
});

/** How many bad inputs the spec checks (reported in docs). */
export const BAD_INPUT_CASE_COUNT = CASES.length;
