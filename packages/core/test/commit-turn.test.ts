import { describe, expect, it } from 'vitest';
import type { Committer } from '../src/contracts.js';
import { isCommitter } from '../src/contracts.js';
import { isSessionKitError } from '../src/errors.js';
import { applyCommit, commitTurn } from '../src/helpers/commit-turn.js';
import type { CommitInput, CommitResult, Message } from '../src/types.js';
import { codeOf } from './fixtures/codes.js';
import { TinyStore } from './fixtures/tiny-store.js';

const user = (content: string): Message => ({ role: 'user', content });

async function storeWith(id = 's1', messages: Message[] = []) {
  const store = new TinyStore();
  await store.create({ id, messages, folder: '/w' });
  return store;
}

describe('commitTurn on a store without commit', () => {
  it('is a plain Store, so the fallback is used', async () => {
    expect(isCommitter(await storeWith())).toBe(false);
  });

  it('appends, patches and increments, returning the new revision and count', async () => {
    const store = await storeWith('s1', [user('a')]);
    const before = await store.load('s1');
    const result = await commitTurn(store, 's1', {
      append: [user('b'), { role: 'assistant', content: 'c' }],
      patch: { title: 'T', metadata: { k: 'v' } },
      increment: { tokenCount: 7, turnCount: 1 },
    });
    expect(result.revision).toBe(2);
    expect(result.messageCount).toBe(3);
    expect(result.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    const after = await store.load('s1');
    expect(after.messages).toEqual([user('a'), user('b'), { role: 'assistant', content: 'c' }]);
    expect(after).toMatchObject({ title: 'T', metadata: { k: 'v' }, tokenCount: 7, turnCount: 1 });
    expect(after.revision).toBe(2);
    expect(after.updatedAt).toEqual(result.updatedAt);
  });

  it('replaces the history', async () => {
    const store = await storeWith('s1', [user('a'), user('b')]);
    const r = await commitTurn(store, 's1', { replace: [user('summary')] });
    expect(r.messageCount).toBe(1);
    expect((await store.load('s1')).messages).toEqual([user('summary')]);
  });

  it('copies the appended messages, so later changes by the caller do not leak in', async () => {
    const store = await storeWith();
    const msg = { role: 'user', content: 'original' };
    await commitTurn(store, 's1', { append: [msg] });
    msg.content = 'changed';
    expect((await store.load('s1')).messages).toEqual([user('original')]);
  });

  it('commits when the expectations hold', async () => {
    const store = await storeWith('s1', [user('a')]);
    const r = await commitTurn(store, 's1', {
      expectedRevision: 1,
      expectedMessageCount: 1,
      append: [user('b')],
    });
    expect(r).toMatchObject({ revision: 2, messageCount: 2 });
  });

  it('throws conflict without retrying when an expectation does not hold', async () => {
    const store = await storeWith('s1', [user('a')]);
    for (const input of [
      { expectedRevision: 5, append: [user('x')] },
      { expectedMessageCount: 0, append: [user('x')] },
    ]) {
      const loads = store.calls.load;
      expect(await codeOf(commitTurn(store, 's1', input))).toBe('conflict');
      expect(store.calls.load - loads).toBe(1);
    }
    expect(store.calls.save).toBe(0);
    expect((await store.load('s1')).messages).toEqual([user('a')]);
  });

  it('fails a stale expectedRevision at once: one load, no save, no retry', async () => {
    const store = await storeWith('s1', [user('a')]);
    await commitTurn(store, 's1', { patch: { title: 'moved on' } }); // now revision 2
    const before = { ...store.calls };
    const e = await commitTurn(store, 's1', { expectedRevision: 1, append: [user('x')] }).catch(
      (x: unknown) => x,
    );
    expect(isSessionKitError(e, 'conflict')).toBe(true);
    expect((e as Error).message).toMatch(/changed since revision 1 \(now 2\)/);
    expect(store.calls.load - before.load).toBe(1);
    expect(store.calls.save - before.save).toBe(0);
    expect((await store.load('s1')).messages).toEqual([user('a')]);
  });

  it('commits expectedMessageCount alone when a concurrent writer only renamed the session', async () => {
    const store = await storeWith('s1', [user('a')]);
    // Another writer renames the session between our load and our save.
    store.hooks.beforeSave = async (s) => {
      store.hooks.beforeSave = undefined;
      const stored = store.sessions.get(s.id)!;
      store.sessions.set(s.id, { ...stored, title: 'renamed', revision: stored.revision + 1 });
    };
    const r = await commitTurn(store, 's1', { expectedMessageCount: 1, append: [user('b')] });
    expect(store.calls.conflicts).toBe(1);
    expect(store.calls.load).toBe(2);
    expect(store.calls.save).toBe(2);
    expect(r).toMatchObject({ revision: 3, messageCount: 2 });
    const after = await store.load('s1');
    expect(after.title).toBe('renamed'); // the rename is kept, not overwritten
    expect(after.messages).toEqual([user('a'), user('b')]);
  });

  it('fails expectedMessageCount when the concurrent writer appended: the reload decides', async () => {
    const store = await storeWith('s1', [user('a')]);
    store.hooks.beforeSave = async (s) => {
      store.hooks.beforeSave = undefined;
      const stored = store.sessions.get(s.id)!;
      store.sessions.set(s.id, {
        ...stored,
        messages: [...stored.messages, user('theirs')],
        revision: stored.revision + 1,
      });
    };
    const e = await commitTurn(store, 's1', { expectedMessageCount: 1, append: [user('b')] }).catch(
      (x: unknown) => x,
    );
    expect(isSessionKitError(e, 'conflict')).toBe(true);
    expect((e as Error).message).toMatch(/has 2 messages, expected 1/);
    expect(store.calls.load).toBe(2);
    expect(store.calls.save).toBe(1);
    expect(store.sessions.get('s1')!.messages).toEqual([user('a'), user('theirs')]);
  });

  it('fails an expectedRevision that loses the race to save after one reload, with no second save', async () => {
    const store = await storeWith();
    // Another writer lands between our load and our save.
    store.hooks.beforeSave = async (s) => {
      store.hooks.beforeSave = undefined;
      const stored = store.sessions.get(s.id)!;
      store.sessions.set(s.id, { ...stored, revision: stored.revision + 1 });
    };
    const e = await commitTurn(store, 's1', { expectedRevision: 1, append: [user('x')] }).catch(
      (x: unknown) => x,
    );
    expect(isSessionKitError(e, 'conflict')).toBe(true);
    expect(store.calls.load).toBe(2);
    expect(store.calls.save).toBe(1);
    expect(store.sessions.get('s1')!.messages).toEqual([]);
  });

  it('retries an unconditional commit after a conflict and applies it on the new state', async () => {
    const store = await storeWith();
    store.hooks.beforeSave = async (s) => {
      store.hooks.beforeSave = undefined;
      const stored = store.sessions.get(s.id)!;
      store.sessions.set(s.id, {
        ...stored,
        messages: [user('sneaked in')],
        revision: stored.revision + 1,
      });
    };
    const r = await commitTurn(store, 's1', { append: [user('mine')] });
    expect(store.calls.conflicts).toBe(1);
    expect(r).toMatchObject({ revision: 3, messageCount: 2 });
    expect((await store.load('s1')).messages).toEqual([user('sneaked in'), user('mine')]);
  });

  it.each([
    ['a store that yields between read and write', false],
    ['a store with I/O latency (losers may lose many rounds)', true],
  ])(
    'keeps every append of 8 concurrent writers committing 10 times each, on %s',
    async (_, slow) => {
      const store = await storeWith();
      if (slow) {
        const latency = () => new Promise<void>((r) => setTimeout(r, Math.random() * 2));
        store.hooks.beforeLoad = latency;
        store.hooks.beforeSave = latency;
      }
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          for (let i = 0; i < 10; i++) {
            await commitTurn(store, 's1', {
              append: [user(`w${w}-${i}`)],
              increment: { turnCount: 1 },
            });
          }
        }),
      );
      const s = await store.load('s1');
      expect(store.calls.conflicts).toBeGreaterThan(0); // the race really happened
      expect(s.messages).toHaveLength(80);
      expect(s.turnCount).toBe(80);
      expect(s.revision).toBe(81);
      for (let w = 0; w < 8; w++) {
        const mine = s.messages.map((m) => m.content).filter((c) => String(c).startsWith(`w${w}-`));
        expect(mine).toEqual(Array.from({ length: 10 }, (_, i) => `w${w}-${i}`));
      }
    },
  );

  it('gives up with conflict after maxRetries when it never wins', async () => {
    const store = await storeWith();
    store.hooks.beforeSave = async (s) => {
      const stored = store.sessions.get(s.id)!;
      store.sessions.set(s.id, { ...stored, revision: stored.revision + 1 });
    };
    const e = await commitTurn(store, 's1', { append: [user('x')] }, { maxRetries: 3 }).catch(
      (x: unknown) => x,
    );
    expect(isSessionKitError(e, 'conflict')).toBe(true);
    expect(store.calls.save).toBe(4);
  });

  it('gives up after maxRetries with an expectation that keeps holding, too', async () => {
    const store = await storeWith();
    // Others only bump the revision (touching fields), never the history.
    store.hooks.beforeSave = async (s) => {
      const stored = store.sessions.get(s.id)!;
      store.sessions.set(s.id, { ...stored, revision: stored.revision + 1 });
    };
    const e = await commitTurn(
      store,
      's1',
      { expectedMessageCount: 0, append: [user('x')] },
      { maxRetries: 2 },
    ).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'conflict')).toBe(true);
    expect(store.calls.load).toBe(3);
    expect(store.calls.save).toBe(3);
  });

  it('truncates on the fallback: keeps a prefix, then appends', async () => {
    const store = await storeWith('s1', [user('a'), user('b'), user('c')]);
    const r = await commitTurn(store, 's1', { truncate: 1, append: [user('d')] });
    expect(r).toMatchObject({ revision: 2, messageCount: 2 });
    expect((await store.load('s1')).messages).toEqual([user('a'), user('d')]);
    expect(await codeOf(commitTurn(store, 's1', { truncate: 5 }))).toBe('invalid_argument');
    expect((await store.load('s1')).revision).toBe(2);
  });

  it('refuses an operationId on the fallback: it cannot be recorded atomically', async () => {
    const store = await storeWith('s1', [user('a')]);
    const e = await commitTurn(store, 's1', { operationId: 'op', append: [user('b')] }).catch(
      (x: unknown) => x,
    );
    expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
    expect((e as Error).message).toMatch(/operationId needs a store with commit/);
    expect((await store.load('s1')).messages).toEqual([user('a')]);
  });

  it('passes an aborted signal through: aborted, nothing written', async () => {
    const store = await storeWith('s1', [user('a')]);
    const e = await commitTurn(
      store,
      's1',
      { append: [user('b')] },
      {},
      {
        signal: AbortSignal.abort(),
      },
    ).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'aborted')).toBe(true);
    expect((await store.load('s1')).messages).toEqual([user('a')]);
  });

  it('rejects bad options with invalid_argument before any I/O', async () => {
    const store = await storeWith();
    const loads = store.calls.load;
    for (const options of [{ maxRetries: -1 }, { maxRetries: 1.5 }, { retries: 3 }, 'x']) {
      expect(
        await codeOf(commitTurn(store, 's1', { append: [] }, options as { maxRetries?: number })),
        JSON.stringify(options),
      ).toBe('invalid_argument');
    }
    expect(store.calls.load).toBe(loads);
  });

  it('validates before any I/O', async () => {
    const store = await storeWith();
    const loads = store.calls.load;
    expect(await codeOf(commitTurn(store, '../x', { append: [] }))).toBe('invalid_argument');
    expect(await codeOf(commitTurn(store, 's1', { append: [], replace: [] }))).toBe(
      'invalid_argument',
    );
    expect(
      await codeOf(commitTurn(store, 's1', { bogus: 1 } as unknown as CommitInput<Message>)),
    ).toBe('invalid_argument');
    expect(store.calls.load).toBe(loads);
  });

  it('passes not_found through', async () => {
    expect(await codeOf(commitTurn(await storeWith(), 'missing', { append: [user('x')] }))).toBe(
      'not_found',
    );
  });
});

describe('commitTurn on a store with commit', () => {
  it('uses the native commit and never loads or saves', async () => {
    const base = await storeWith();
    const seen: [string, CommitInput<Message>][] = [];
    const result: CommitResult = { revision: 9, messageCount: 4, updatedAt: new Date(5) };
    const committer: Committer<Message> = {
      commit: async (id, input) => {
        seen.push([id, input]);
        return result;
      },
    };
    const store = Object.assign(base, committer);
    expect(isCommitter(store)).toBe(true);
    const input = { append: [user('x')], expectedRevision: 3 };
    expect(await commitTurn(store, 's1', input)).toBe(result);
    expect(seen).toEqual([['s1', input]]);
    expect(store.calls.load).toBe(0);
    expect(store.calls.save).toBe(0);
  });
});

describe('applyCommit', () => {
  it('is pure: returns a new session and leaves the input alone', async () => {
    const s = await (await storeWith('s1', [user('a')])).load('s1');
    const now = new Date('2030-01-01T00:00:00Z');
    const next = applyCommit(s, { append: [user('b')], patch: { status: 'done' } }, now);
    expect(next.messages).toEqual([user('a'), user('b')]);
    expect(next).toMatchObject({ status: 'done', revision: 2, updatedAt: now });
    expect('messageCount' in next).toBe(false);
    expect(s.messages).toEqual([user('a')]);
    expect(s.status).toBe('active');
    expect(s.revision).toBe(1);
  });
});
