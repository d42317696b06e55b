// SessionKitSession's methods on every backend: what each one reads and writes, its
// atomicity under concurrent callers, and the idempotence of transactions.
import {
  isSessionHistoryRewriteAwareSession,
  isSessionHistoryTransactionAwareSession,
} from '@openai/agents-core';
import { isSessionKitError, newSessionId } from '@sessionkit/core';
import { withLostReplies } from '@sessionkit/test-backends';
import { describe, expect, it } from 'vitest';
import { SessionKitSession } from '../src/index.js';
import {
  asStored,
  assistantText,
  toolCall,
  toolResult,
  userParts,
  userText,
} from './support/items.js';
import { describeOnBackends } from './support/per-backend.js';

const append = (operationId: string, items: unknown[]) => ({
  operationId,
  transaction: { type: 'append_items' as const, items: items as never[] },
});
const replaceSuffix = (operationId: string, expectedSuffix: unknown[], replacement: unknown[]) => ({
  operationId,
  transaction: {
    type: 'replace_suffix' as const,
    expectedSuffix: expectedSuffix as never[],
    replacement: replacement as never[],
  },
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describeOnBackends('SessionKitSession', (ctx) => {
  describe('reads and appends (any store)', () => {
    it('is detected by the SDK as transaction- and rewrite-aware', () => {
      const session = ctx.session();
      expect(isSessionHistoryTransactionAwareSession(session)).toBe(true);
      expect(isSessionHistoryRewriteAwareSession(session)).toBe(true);
    });

    it('creates its sessionkit session on the first write, with the given fields', async () => {
      const session = ctx.session({ session: { title: 'Support chat', folder: '/support' } });
      const id = await session.getSessionId();
      expect(await session.getItems()).toEqual([]);
      await expect(ctx.store().load(id)).rejects.toMatchObject({ code: 'not_found' });
      await session.addItems([userText('hello')]);
      const stored = await ctx.store().load(id);
      expect(stored).toMatchObject({ title: 'Support chat', folder: '/support' });
      expect(stored.messages).toEqual([userText('hello')]);
    });

    it('getItems reads the whole history or its newest items, oldest first', async () => {
      const session = ctx.session();
      const items = [
        userText('one'),
        assistantText('two'),
        userParts('three'),
        assistantText('four'),
      ];
      await session.addItems(items);
      expect(await session.getItems()).toEqual(asStored(items));
      expect(await session.getItems(2)).toEqual(asStored(items.slice(2)));
      expect(await session.getItems(1.5)).toEqual(asStored(items.slice(2)));
      expect(await session.getItems(10)).toEqual(asStored(items));
      expect(await session.getItems(Number.POSITIVE_INFINITY)).toEqual(asStored(items));
      expect(await session.getItems(0)).toEqual([]);
      expect(await session.getItems(-3)).toEqual([]);
      await expect(session.getItems(Number.NaN)).rejects.toMatchObject({
        code: 'invalid_argument',
      });
    });

    it('addItems is one commit; an empty list writes nothing', async () => {
      const session = ctx.session();
      const id = await session.getSessionId();
      await session.addItems([userText('a')]);
      const before = (await ctx.store().load(id)).revision;
      await session.addItems([
        assistantText('b'),
        toolCall('c1', { q: 'x' }),
        toolResult('c1', 'y'),
      ]);
      await session.addItems([]);
      const after = await ctx.store().load(id);
      expect(after.revision).toBe(before + 1);
      expect(after.messages).toHaveLength(4);
    });

    it('replaceHistoryWithCompaction replaces the history in one commit', async () => {
      const session = ctx.session();
      const id = await session.getSessionId();
      await session.addItems([userText('a'), assistantText('b'), userText('c')]);
      const before = (await ctx.store().load(id)).revision;
      const compacted = [
        { type: 'compaction' as const, encrypted_content: 'opaque' },
        userText('c'),
      ];
      await session.replaceHistoryWithCompaction(compacted as never[]);
      const after = await ctx.store().load(id);
      expect(after.messages).toEqual(compacted);
      expect(after.revision).toBe(before + 1);
    });

    it('rejects transactions MemorySession rejects, before any write', async () => {
      const session = ctx.session();
      const bad = [
        { operationId: '  ', transaction: { type: 'append_items', items: [] } },
        { operationId: 'x', transaction: { type: 'rewrite', items: [] } },
        { operationId: 'x', transaction: { type: 'append_items', items: [], extra: 1 } },
        { operationId: 'x', transaction: { type: 'append_items', items: [{ type: 'nope' }] } },
        { operationId: 'x', transaction: { type: 'append_items', items: [{ content: 1n }] } },
      ];
      for (const args of bad) {
        await expect(session.applyHistoryTransaction(args as never)).rejects.toMatchObject({
          code: 'invalid_argument',
        });
      }
      await expect(ctx.store().load(await session.getSessionId())).rejects.toMatchObject({
        code: 'not_found',
      });
    });

    it('search finds the text of string content', async () => {
      const session = ctx.session();
      await session.addItems([userText('Where is the okapi enclosure?'), assistantText('Gate 4.')]);
      const found = await ctx.store().list({ query: 'okapi' });
      expect(found.map((s) => s.id)).toContain(await session.getSessionId());
    });

    // Core's message text reads the Responses API's "input_text" and "output_text" parts.
    it('search finds the text of input_text and output_text parts', async () => {
      const session = ctx.session();
      await session.addItems([userParts('capybara habitat'), assistantText('The wetland zone.')]);
      const id = await session.getSessionId();
      expect((await ctx.store().list({ query: 'capybara' })).map((s) => s.id)).toContain(id);
      expect((await ctx.store().list({ query: 'wetland' })).map((s) => s.id)).toContain(id);
    });
  });

  describe('pops, clears, transactions and rewrites', () => {
    ctx.requiresHistoryWrites();

    it('popItem removes and returns the newest item, and undefined when empty', async () => {
      const session = ctx.session();
      await session.addItems([userText('a'), assistantText('b')]);
      expect(await session.popItem()).toEqual(asStored(assistantText('b')));
      expect(await session.popItem()).toEqual(userText('a'));
      expect(await session.popItem()).toBeUndefined();
      expect(await session.getItems()).toEqual([]);
    });

    it('concurrent pops from two store instances each take a different item, never two', async () => {
      const id = newSessionId();
      const a = ctx.session({ sessionId: id });
      const b = new SessionKitSession({ store: await ctx.peer(), sessionId: id });
      const items = Array.from({ length: 8 }, (_, i) => userText(`item ${i}`));
      await a.addItems(items);
      const popped = await Promise.all([
        a.popItem(),
        b.popItem(),
        a.popItem(),
        b.popItem(),
        a.popItem(),
        b.popItem(),
      ]);
      const texts = popped.map((item) => (item as { content: string }).content);
      expect(new Set(texts).size).toBe(6);
      expect(texts.sort()).toEqual(
        items
          .slice(2)
          .map((item) => (item as { content: string }).content)
          .sort(),
      );
      expect(await a.getItems()).toEqual(items.slice(0, 2));
    });

    it('clearSession drops every item and keeps the sessionkit session and its fields', async () => {
      const session = ctx.session({ session: { title: 'Kept' } });
      const id = await session.getSessionId();
      await session.addItems([userText('a'), assistantText('b')]);
      await session.clearSession();
      expect(await session.getItems()).toEqual([]);
      expect(await ctx.store().load(id)).toMatchObject({ title: 'Kept', messages: [] });
      const untouched = ctx.session();
      await untouched.clearSession();
      await expect(ctx.store().load(await untouched.getSessionId())).rejects.toMatchObject({
        code: 'not_found',
      });
    });

    it('append_items applies once per operation id, also from another store instance', async () => {
      const id = newSessionId();
      const session = ctx.session({ sessionId: id });
      const other = new SessionKitSession({ store: await ctx.peer(), sessionId: id });
      await session.applyHistoryTransaction(append('turn-1', [userText('q'), assistantText('a')]));
      await other.applyHistoryTransaction(append('turn-1', [userText('q'), assistantText('a')]));
      await session.applyHistoryTransaction(append('turn-1', [userText('q'), assistantText('a')]));
      expect(await session.getItems()).toEqual(asStored([userText('q'), assistantText('a')]));
    });

    it('the same operation id with another transaction fails with conflict and changes nothing', async () => {
      const session = ctx.session();
      await session.applyHistoryTransaction(append('turn-1', [userText('q')]));
      const e = await rejection(
        session.applyHistoryTransaction(append('turn-1', [userText('other')])),
      );
      expect(isSessionKitError(e, 'conflict')).toBe(true);
      const e2 = await rejection(
        session.applyHistoryTransaction(replaceSuffix('turn-1', [userText('q')], [userText('r')])),
      );
      expect(isSessionKitError(e2, 'conflict')).toBe(true);
      expect(await session.getItems()).toEqual([userText('q')]);
    });

    it('replace_suffix swaps a matching suffix and keeps the prefix', async () => {
      const session = ctx.session();
      const id = await session.getSessionId();
      await session.addItems([
        userText('keep'),
        assistantText('blocked'),
        toolCall('c1', { a: 1 }),
      ]);
      await session.applyHistoryTransaction(
        replaceSuffix('accept-1', asStored([assistantText('blocked'), toolCall('c1', { a: 1 })]), [
          assistantText('redacted'),
        ]),
      );
      expect(await session.getItems()).toEqual(
        asStored([userText('keep'), assistantText('redacted')]),
      );
      await session.applyHistoryTransaction(
        replaceSuffix('accept-1', asStored([assistantText('blocked'), toolCall('c1', { a: 1 })]), [
          assistantText('redacted'),
        ]),
      );
      expect((await ctx.store().load(id)).messages).toHaveLength(2);
    });

    it('replace_suffix with a suffix that is not the stored one fails and changes nothing', async () => {
      const session = ctx.session();
      await session.addItems([userText('a'), assistantText('b')]);
      for (const expected of [
        [assistantText('x')],
        [userText('z'), userText('a'), assistantText('b')],
      ]) {
        const e = await rejection(
          session.applyHistoryTransaction(replaceSuffix(newSessionId(), expected, [userText('r')])),
        );
        expect(isSessionKitError(e, 'conflict')).toBe(true);
      }
      expect(await session.getItems()).toEqual(asStored([userText('a'), assistantText('b')]));
    });

    it('a transaction whose reply was lost after it landed, retried with its id, leaves one copy', async () => {
      const lossy = withLostReplies(ctx.store());
      const session = new SessionKitSession({ store: lossy.store });
      await session.addItems([userText('q')]);
      const turn = append('turn-2', [assistantText('answer'), toolCall('c9', { n: 9 })]);
      lossy.loseNextReply();
      const e = await rejection(session.applyHistoryTransaction(turn));
      expect(isSessionKitError(e, 'unavailable')).toBe(true);
      expect(lossy.lost).toBe(1);
      await session.applyHistoryTransaction(turn);
      const suffix = replaceSuffix('accept-2', turn.transaction.items, [assistantText('final')]);
      lossy.loseNextReply();
      await expect(session.applyHistoryTransaction(suffix)).rejects.toMatchObject({
        code: 'unavailable',
      });
      await session.applyHistoryTransaction(suffix);
      expect(await session.getItems()).toEqual(asStored([userText('q'), assistantText('final')]));
    });

    it('replace_function_call rewrites the call in place and drops its later duplicates', async () => {
      const session = ctx.session();
      const id = await session.getSessionId();
      const history = [
        userText('q'),
        toolCall('c1', { path: '/etc' }),
        toolResult('c1', 'denied'),
        toolCall('c1', { path: '/etc' }),
        assistantText('done'),
      ];
      await session.addItems(history);
      const replacement = toolCall('c1', { path: '/tmp' }) as never;
      await session.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'c1', replacement }],
      });
      expect(await session.getItems()).toEqual(
        asStored([userText('q'), replacement, toolResult('c1', 'denied'), assistantText('done')]),
      );
      const revision = (await ctx.store().load(id)).revision;
      await session.applyHistoryMutations({ mutations: [] });
      await session.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'absent', replacement }],
      });
      expect((await ctx.store().load(id)).revision).toBe(revision);
    });
  });
});
