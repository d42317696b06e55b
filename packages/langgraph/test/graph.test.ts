// SessionKitSaver under a real LangGraph StateGraph: conversations that survive a new saver
// (a restart), forks from an earlier checkpoint, concurrent writers, and what each call
// reads and writes as the thread grows.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { SessionKitSaver } from '../src/index.js';
import { countingStore } from './support/counting-store.js';
import { chatGraph, userTurn } from './support/graph.js';

const thread = (thread_id: string) => ({ configurable: { thread_id } });

describe('a StateGraph on SessionKitSaver', () => {
  it('keeps the conversation across savers and forks from an earlier checkpoint', async () => {
    const store = new MemoryStore<unknown>();
    const first = chatGraph(new SessionKitSaver(store));
    await first.invoke(userTurn('hello'), thread('t1'));
    await first.invoke(userTurn('again'), thread('t1'));
    // A new saver on the same store, as after a restart: nothing remembered in memory.
    const restarted = chatGraph(new SessionKitSaver(store));
    const state = await restarted.invoke(userTurn('third'), thread('t1'));
    expect(
      state.messages.map((m) => m.content).filter((c) => !String(c).startsWith('reply')),
    ).toEqual(['hello', 'again', 'third']);
    expect(state.messages).toHaveLength(9);

    const history = [];
    for await (const snapshot of restarted.getStateHistory(thread('t1'))) history.push(snapshot);
    // Three checkpoints per invoke: the input, the start step and the agent's step.
    expect(history).toHaveLength(9);
    expect(history.map((s) => s.config.configurable?.checkpoint_id)).toEqual(
      history
        .map((s) => s.config.configurable?.checkpoint_id)
        .sort()
        .reverse(),
    );
    const afterFirstTurn = history.find((s) => s.values.messages?.length === 3)!;
    const forked = await restarted.invoke(
      userTurn('a different second turn'),
      afterFirstTurn.config,
    );
    expect(forked.messages).toHaveLength(6);
    expect(forked.messages[3]!.content).toBe('a different second turn');
    const latest = await restarted.getState(thread('t1'));
    expect(latest.values.messages).toHaveLength(6);
    await store.close();
  });

  it('writes only the new messages of each turn and reads no more than the thread holds', async () => {
    const counted = countingStore(new MemoryStore<unknown>());
    const saver = new SessionKitSaver(counted.store);
    const graph = chatGraph(saver, 1000);
    const perTurn: number[] = [];
    for (let i = 0; i < 40; i++) {
      counted.reset();
      await graph.invoke(userTurn(`turn ${i}`), thread('long'));
      perTurn.push(counted.counts.bytesWritten);
    }
    expect(counted.counts.fullLoads).toBe(0);
    // Each turn adds three messages (about 2 KB) whatever the thread's length.
    expect(Math.max(...perTurn.slice(5))).toBeLessThan(2 * Math.min(...perTurn.slice(5)));
    const session = await counted.store.load(saver.sessionIdFor('long'));
    const state = await graph.getState(thread('long'));
    const messagesJson = JSON.stringify(state.values.messages).length;
    const stored = JSON.stringify(session.messages).length;
    expect(state.values.messages).toHaveLength(120);
    // The replies once (the node's pending writes, which the channel's value points at),
    // the short user turns twice (the input and the start task's writes), plus the
    // checkpoints themselves (see the README's benchmark).
    expect(stored).toBeLessThan(2 * messagesJson);
    counted.reset();
    await saver.getTuple(thread('long'));
    expect(counted.counts.recordsRead).toBeLessThanOrEqual(session.messages.length);
  });

  it('reads a constant number of records for the latest checkpoint of scalar channels', async () => {
    const counted = countingStore(new MemoryStore<unknown>());
    const saver = new SessionKitSaver(counted.store);
    const State = Annotation.Root({ count: Annotation<number>(), note: Annotation<string>() });
    const graph = new StateGraph(State)
      .addNode('inc', (s) => ({ count: (s.count ?? 0) + 1, note: `n${s.count ?? 0}` }))
      .addEdge(START, 'inc')
      .addEdge('inc', END)
      .compile({ checkpointer: saver });
    const readsAt = async (turns: number): Promise<number> => {
      for (let i = 0; i < turns; i++) await graph.invoke({ note: 'x' }, thread(`s${turns}`));
      counted.reset();
      const tuple = await saver.getTuple(thread(`s${turns}`));
      expect(tuple?.checkpoint.channel_values.count).toBe(turns);
      return counted.counts.recordsRead;
    };
    const short = await readsAt(3);
    const long = await readsAt(150);
    expect(long).toBeLessThanOrEqual(short + 2);
    expect(counted.counts.fullLoads).toBe(0);
  });

  it('keeps every write of two savers putting to one thread at once', async () => {
    const store = new MemoryStore<unknown>();
    const a = new SessionKitSaver(store);
    const b = new SessionKitSaver(store);
    const config = await a.put(
      { configurable: { thread_id: 'shared', checkpoint_ns: '' } },
      {
        v: 4,
        id: uuid6(0),
        ts: new Date().toISOString(),
        channel_values: {},
        channel_versions: {},
        versions_seen: {},
      },
      { source: 'input', step: -1, parents: {} },
      {},
    );
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).putWrites(config, [['out', i]], `task-${String(i).padStart(2, '0')}`),
      ),
    );
    const tuple = await b.getTuple(config);
    expect(tuple?.pendingWrites?.map((w) => w[2])).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });
});
