// What LangGraph's own savers lack, on every backend: listing threads, copying one,
// keeping the last checkpoints of a thread, pruning whole threads, ids from any string,
// and two store instances (two processes) writing to one thread at once.
import { randomUUID } from 'node:crypto';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import type { FullStore } from '@sessionkit/core';
import { describeOnBackends } from '@sessionkit/test-backends';
import { expect, it } from 'vitest';
import { SessionKitSaver } from '../src/index.js';
import { chatGraph, userTurn } from './support/graph.js';

const thread = (thread_id: string) => ({ configurable: { thread_id } });
const emptyCheckpoint = () => ({
  v: 4,
  id: uuid6(0),
  ts: new Date().toISOString(),
  channel_values: {},
  channel_versions: {},
  versions_seen: {},
});

describeOnBackends(
  {
    package: 'langgraph',
    backends: ['memory', 'file', 'postgres', 'redis', 'redis-cluster', 's3'],
    commitOptions: {},
    needing: 'that write threads',
  },
  'SessionKitSaver threads',
  (suite) => {
    // Each test lists only its own threads: a folder of its own on the backend's store.
    const saverOn = (store: FullStore<unknown> = suite.store()) =>
      new SessionKitSaver(store, { folder: `lg-${randomUUID()}` });
    async function saverWithThreads(ids: string[]) {
      const store = suite.store();
      const saver = saverOn(store);
      const graph = chatGraph(saver);
      for (const id of ids) await graph.invoke(userTurn(`hi from ${id}`), thread(id));
      return { store, saver, graph };
    }

    it('lists thread ids newest first with keyset paging', async () => {
      const ids = Array.from({ length: 7 }, (_, i) => `thread-${i}`);
      const { saver } = await saverWithThreads(ids);
      const first = await saver.threads({ limit: 3 });
      expect(first.threads.map((t) => t.threadId)).toEqual(['thread-6', 'thread-5', 'thread-4']);
      const second = await saver.threads({ limit: 3, startAfter: first.next! });
      expect(second.threads.map((t) => t.threadId)).toEqual(['thread-3', 'thread-2', 'thread-1']);
      const last = await saver.threads({ limit: 3, startAfter: second.next! });
      expect(last.threads.map((t) => t.threadId)).toEqual(['thread-0']);
      expect(last.next).toBeUndefined();
      await expect(saver.threads({ limit: 0 })).rejects.toThrow(RangeError);
    });

    it('lists a subgraph thread once, by its root namespace', async () => {
      const saver = saverOn();
      const threadId = `sub-${randomUUID()}`;
      await saver.put(
        { configurable: { thread_id: threadId, checkpoint_ns: 'child:1' } },
        emptyCheckpoint(),
        { source: 'loop', step: 0, parents: {} },
        {},
      );
      expect((await saver.threads()).threads.map((t) => t.threadId)).toEqual([threadId]);
      await saver.deleteThread(threadId);
      expect((await saver.threads()).threads).toEqual([]);
      await expect(
        suite.store().load(saver.sessionIdFor(threadId, 'child:1')),
      ).rejects.toMatchObject({
        code: 'not_found',
      });
    });

    it('keeps every write of two store instances putting to one thread at once', async () => {
      const a = saverOn();
      const b = new SessionKitSaver(await suite.peer());
      const config = await a.put(
        { configurable: { thread_id: `shared-${randomUUID()}`, checkpoint_ns: '' } },
        emptyCheckpoint(),
        { source: 'input', step: -1, parents: {} },
        {},
      );
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? a : b).putWrites(
            config,
            [['out', i]],
            `task-${String(i).padStart(2, '0')}`,
          ),
        ),
      );
      const tuple = await b.getTuple(config);
      expect(tuple?.pendingWrites?.map((w) => w[2])).toEqual(
        Array.from({ length: 12 }, (_, i) => i),
      );
    });

    it('copies a thread that then goes its own way', async () => {
      const { saver, graph } = await saverWithThreads(['original']);
      await saver.copyThread('original', 'copy');
      await graph.invoke(userTurn('only in the copy'), thread('copy'));
      const original = await graph.getState(thread('original'));
      const copy = await graph.getState(thread('copy'));
      expect(original.values.messages).toHaveLength(3);
      expect(copy.values.messages).toHaveLength(6);
      expect(copy.values.messages[3].content).toBe('only in the copy');
      await expect(saver.copyThread('original', 'copy')).rejects.toMatchObject({ code: 'exists' });
      await expect(saver.copyThread('missing', 'other')).rejects.toMatchObject({
        code: 'not_found',
      });
    });

    it('keeps the last checkpoints of a thread, and the conversation goes on', async () => {
      const { saver, graph } = await saverWithThreads(['long']);
      for (let i = 0; i < 5; i++) await graph.invoke(userTurn(`turn ${i}`), thread('long'));
      const before = await graph.getState(thread('long'));
      const dropped = await saver.keepLast('long', 2);
      expect(dropped).toBe(16);
      const checkpoints = [];
      for await (const t of saver.list(thread('long'))) checkpoints.push(t);
      expect(checkpoints).toHaveLength(2);
      const after = await graph.getState(thread('long'));
      const contents = (state: typeof before) =>
        (state.values.messages as { content: unknown }[]).map((m) => m.content);
      expect(contents(after)).toEqual(contents(before));
      const next = await graph.invoke(userTurn('after retention'), thread('long'));
      expect(next.messages).toHaveLength(21);
      expect(await saver.keepLast('long', 100)).toBe(0);
    });

    it('prunes whole threads, namespaces included, keeping the newest', async () => {
      const { saver } = await saverWithThreads(['a', 'b', 'c', 'd']);
      expect(await saver.pruneThreads(2)).toBe(2);
      expect((await saver.threads()).threads.map((t) => t.threadId)).toEqual(['d', 'c']);
      expect(await saver.getTuple(thread('a'))).toBeUndefined();
    });

    it('maps any thread id and namespace to a valid session id, keeping the original', async () => {
      const store = suite.store();
      const folder = `lg-${randomUUID()}`;
      const saver = new SessionKitSaver(store, { folder });
      const graph = chatGraph(saver);
      const odd = [
        '../etc/passwd',
        'a b/c*{d}',
        'with\u0000nul',
        '\ud800lone',
        'x'.repeat(500),
        ''.padEnd(3, '🙂'),
      ];
      for (const id of odd) await graph.invoke(userTurn(id), thread(id));
      const listed = (await saver.threads({ limit: 100 })).threads.map((t) => t.threadId);
      expect(new Set(listed)).toEqual(new Set(odd));
      for (const id of odd) {
        const state = await graph.getState(thread(id));
        expect(state.values.messages[0].content).toBe(id);
        const session = await store.load(saver.sessionIdFor(id));
        expect(session.folder).toBe(folder);
        expect(session.metadata['langgraph.thread_id']).toBeTruthy();
        expect(session.title.length).toBeGreaterThan(0);
      }
      expect(saver.sessionIdFor('same', '')).not.toBe(saver.sessionIdFor('same', 'ns'));
      expect(saver.sessionIdFor('a', 'b|c')).not.toBe(saver.sessionIdFor('a|b', 'c'));
    });
  },
);
