// Errors a caller can act on: an `invalid_argument` names the argument at fault. DESIGN asks
// that messages name the adapter and the id; for a rejected argument the id is not the
// problem, so the suite asks for the argument's name instead (as the reference adapter and
// every first-party adapter word them, through core's validation).
import type { Capability, FullStore } from '@sessionkit/core';
import { expect } from 'vitest';
import { defineSpec } from '../harness.js';
import { type Seed, seedStore } from './bad-input.js';
import { expectCode, normalizedWords, turns } from './util.js';

interface NamedArgumentCase {
  /** The rejected call, in words. */
  name: string;
  capability: 'Store' | Capability;
  /** The argument's name, which the message must contain. */
  argument: string;
  call(store: FullStore, seed: Seed): Promise<unknown>;
}

const NUL = 'a\u0000b';

const CASES: NamedArgumentCase[] = [
  {
    name: 'list with limit -1',
    capability: 'Store',
    argument: 'limit',
    call: (s) => s.list({ limit: -1 }),
  },
  {
    name: 'list with offset -1',
    capability: 'Store',
    argument: 'offset',
    call: (s) => s.list({ offset: -1 }),
  },
  {
    name: 'commit with expectedRevision 0',
    capability: 'Committer',
    argument: 'expectedRevision',
    call: (s, { session }) => s.commit(session.id, { expectedRevision: 0 }),
  },
  {
    name: 'branch at turn -1',
    capability: 'Brancher',
    argument: 'atTurn',
    call: (s, { session }) => s.branch(session.id, -1),
  },
  {
    name: 'a runtime status holding a BigInt',
    capability: 'RuntimeStatusStore',
    argument: 'status',
    call: (s, { session }) => s.saveRuntimeStatus(session.id, { n: 1n } as never),
  },
  {
    name: 'an event with an empty type',
    capability: 'EventLog',
    argument: 'type',
    call: (s, { session }) => s.append(session.id, '', {}),
  },
  {
    name: 'an event payload of Infinity',
    capability: 'EventLog',
    argument: 'payload',
    call: (s, { session }) => s.append(session.id, 'x', Number.POSITIVE_INFINITY),
  },
  {
    name: 'events with limit 0',
    capability: 'EventLog',
    argument: 'limit',
    call: (s, { session }) => s.events(session.id, { limit: 0 }),
  },
  {
    name: 'events after sequence -1',
    capability: 'EventLog',
    argument: 'afterSequence',
    call: (s, { session }) => s.events(session.id, { afterSequence: -1 }),
  },
  {
    name: 'bind with an empty channel',
    capability: 'SessionRouter',
    argument: 'channel',
    call: (s, { session }) => s.bind('', 'c', '', session.id),
  },
  {
    name: 'bind with an empty chatKey',
    capability: 'SessionRouter',
    argument: 'chatKey',
    call: (s, { session }) => s.bind('telegram', '', '', session.id),
  },
  {
    name: 'bind with a NUL in the thread',
    capability: 'SessionRouter',
    argument: 'thread',
    call: (s, { session }) => s.bind('telegram', 'c', NUL, session.id),
  },
  {
    name: 'resolve with a NUL in the channel',
    capability: 'SessionRouter',
    argument: 'channel',
    call: (s) => s.resolve(NUL, 'c', '', ''),
  },
  {
    name: 'resolve with a malformed liveSessionId',
    capability: 'SessionRouter',
    argument: 'liveSessionId',
    call: (s) => s.resolve('telegram', 'c', '', '../x'),
  },
  {
    name: 'unbind with a NUL in the chatKey',
    capability: 'SessionRouter',
    argument: 'chatKey',
    call: (s) => s.unbind('telegram', NUL, ''),
  },
  {
    name: 'touch with a NUL in the thread',
    capability: 'SessionRouter',
    argument: 'thread',
    call: (s) => s.touch('telegram', 'c', NUL),
  },
  {
    name: 'follow with an empty channel',
    capability: 'SessionRouter',
    argument: 'channel',
    call: (s) => s.follow('', 'c', 'tui'),
  },
  {
    name: 'follow with a NUL in the chatKey',
    capability: 'SessionRouter',
    argument: 'chatKey',
    call: (s) => s.follow('telegram', NUL, 'tui'),
  },
  {
    name: 'follow a target holding a NUL',
    capability: 'SessionRouter',
    argument: 'target',
    call: (s) => s.follow('telegram', 'c', NUL),
  },
  {
    name: 'resolve with a NUL in the liveSessionId',
    capability: 'SessionRouter',
    argument: 'liveSessionId',
    call: (s) => s.resolve('telegram', 'c', '', NUL),
  },
  {
    name: 'follow a malformed target',
    capability: 'SessionRouter',
    argument: 'target',
    call: (s) => s.follow('telegram', 'c', '../x'),
  },
  {
    name: 'recent with limit -5',
    capability: 'SessionRouter',
    argument: 'limit',
    call: (s) => s.recent(-5),
  },
  {
    name: 'enforceMax(2.5)',
    capability: 'Pruner',
    argument: 'max',
    call: (s) => s.enforceMax(2.5),
  },
];

/** Each rejected argument is named in the `invalid_argument` message. */
export const errorMessageSpec = defineSpec('bad-input', 'Store', (t) => {
  for (const c of CASES) {
    t.testFor(
      c.capability,
      `an invalid_argument for ${c.name} names "${c.argument}"`,
      async (ctx) => {
        const store = ctx.store as FullStore;
        const seed = await seedStore(store, ctx.id(), ctx.folder());
        const error = await expectCode(c.call(store, seed), 'invalid_argument');
        expect(normalizedWords(error.message)).toContain(normalizedWords(c.argument));
      },
    );
  }

  t.test(
    'an error about one session names it (and sessionId, when set, is its id)',
    async (ctx) => {
      // DESIGN: messages name the adapter and the id. SessionKitError's optional `sessionId`
      // field, when an adapter sets it, must be that id.
      const store = ctx.store as FullStore;
      const missing = ctx.id();
      const seed = await seedStore(store, ctx.id(), ctx.folder());
      const stale = { ...(await store.load(seed.session.id)), revision: 99 };
      for (const [error, id] of [
        [await expectCode(store.load(missing), 'not_found'), missing],
        [await expectCode(store.save(stale), 'conflict'), seed.session.id],
        [await expectCode(store.create(seed.session), 'exists'), seed.session.id],
      ] as const) {
        expect(error.message).toContain(id);
        if (error.sessionId !== undefined) expect(error.sessionId).toBe(id);
      }
    },
  );

  t.testFor(
    'Brancher',
    'a merge_diverged names the child (and sessionId is its id)',
    async (ctx) => {
      const store = ctx.store as FullStore;
      const parent = await store.create({ id: ctx.id(), folder: ctx.folder(), messages: turns(1) });
      const child = await store.branch(parent.id, 1);
      await store.save({ ...(await store.load(parent.id)), messages: turns(2) });
      const error = await expectCode(store.merge(child.id), 'merge_diverged');
      expect(error.message).toContain(child.id);
      if (error.sessionId !== undefined) expect(error.sessionId).toBe(child.id);
    },
  );
});
