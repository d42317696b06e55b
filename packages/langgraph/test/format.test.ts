// The stored layout: threads written by the release before format 2 (a fixture of its
// records, with writes that landed before their checkpoint) read and go on with this
// saver, and format 2 stores each message's bytes once.
import { readFileSync } from 'node:fs';
import type { BaseMessage } from '@langchain/core/messages';
import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { threadSessionInput } from '../src/ids.js';
import { SessionKitSaver } from '../src/index.js';
import type { ThreadRecord } from '../src/records.js';
import { chatGraph, userTurn } from './support/graph.js';

interface Fixture {
  threadId: string;
  expected: {
    latest: string;
    listed: { id: string; messages: string[]; writes: [string, string][] }[];
  };
  records: ThreadRecord[];
}

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/format-1-thread.json', import.meta.url), 'utf8'),
) as Fixture;
const config = { configurable: { thread_id: fixture.threadId } };

async function storeWithFixture(): Promise<{ store: MemoryStore<unknown>; sessionId: string }> {
  const store = new MemoryStore<unknown>();
  const sessionId = new SessionKitSaver(store).sessionIdFor(fixture.threadId);
  await store.create({
    ...threadSessionInput(sessionId, 'langgraph', fixture.threadId, '', undefined),
    messages: fixture.records,
  });
  return { store, sessionId };
}

const contents = (messages: unknown) =>
  ((messages ?? []) as BaseMessage[]).map((m) => String(m.content));

describe('format 1 threads (the release before format 2)', () => {
  it('are read as that release read them: checkpoints, values and pending writes', async () => {
    expect(fixture.records.every((r) => r.lg === 1)).toBe(true);
    const { store } = await storeWithFixture();
    const saver = new SessionKitSaver(store);
    const latest = await saver.getTuple(config);
    expect(latest?.checkpoint.id).toBe(fixture.expected.latest);
    const listed = [];
    for await (const t of saver.list(config))
      listed.push({
        id: t.checkpoint.id,
        messages: contents(t.checkpoint.channel_values.messages),
        writes: t.pendingWrites?.map(([task, channel]) => [task, channel]),
      });
    expect(listed).toEqual(fixture.expected.listed);
  });

  it('go on with format 2 records that a new saver reads back', async () => {
    const { store, sessionId } = await storeWithFixture();
    const before = fixture.expected.listed[0]!.messages;
    const state = await chatGraph(new SessionKitSaver(store), 0).invoke(userTurn('fourth'), config);
    expect(contents(state.messages)).toEqual([...before, 'fourth', 'reply 1 ', 'reply 1 !']);
    const fresh = await new SessionKitSaver(store).getTuple(config);
    expect(contents(fresh?.checkpoint.channel_values.messages)).toEqual(contents(state.messages));
    const records = (await store.load(sessionId)).messages as ThreadRecord[];
    expect(records.slice(fixture.records.length).every((r) => r.lg === 2)).toBe(true);
  });
});

describe('format 2', () => {
  it("stores each node's message once, and a new saver reads the thread back", async () => {
    const store = new MemoryStore<unknown>();
    const saver = new SessionKitSaver(store);
    const graph = chatGraph(saver, 200);
    for (const text of ['first question', 'second question', 'third question'])
      await graph.invoke(userTurn(text), config);
    const sessionId = saver.sessionIdFor(fixture.threadId);
    const stored = JSON.stringify((await store.load(sessionId)).messages);
    // A node's messages are its pending writes; the next checkpoint points at them. (The
    // graph's input is stored as the input checkpoint's __start__ value and as the start
    // task's writes, as LangGraph hands them over.)
    for (const text of ['reply 1 ', 'reply 2 ', 'reply 3 '])
      expect(stored.split(text).length - 1).toBe(2); // each reply's text, and its "!" twin
    const fresh = new SessionKitSaver(store);
    const latest = await fresh.getTuple(config);
    const state = await graph.getState(config);
    expect(contents(latest?.checkpoint.channel_values.messages)).toEqual(
      contents(state.values.messages),
    );
    // The ids the reducer gave the replies after their writes were stored come back too.
    const ids = ((latest?.checkpoint.channel_values.messages ?? []) as BaseMessage[]).map(
      (m) => m.id,
    );
    expect(ids).toEqual((state.values.messages as BaseMessage[]).map((m) => m.id));
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
  });

  it('refuses a value that points at a write of another checkpoint (a damaged history)', async () => {
    const store = new MemoryStore<unknown>();
    const saver = new SessionKitSaver(store);
    await chatGraph(saver).invoke(userTurn('hello'), config);
    const records = (await store.load(saver.sessionIdFor(fixture.threadId)))
      .messages as ThreadRecord[];
    const pointing = records.find(
      (r) => r.k === 'c' && Object.values(r.b).some((b) => 'd' in b && b.d.w !== undefined),
    );
    const other = records.find(
      (r) => r.k === 'w' && r.to !== (pointing as { parent?: string })?.parent,
    );
    expect(pointing).toBeDefined();
    expect(other).toBeDefined();
    for (const b of Object.values((pointing as Extract<ThreadRecord, { k: 'c' }>).b))
      if ('d' in b && b.d.w !== undefined) b.d.w = [[other!.p, 0]];
    const damaged = new MemoryStore<unknown>();
    await damaged.create({
      ...threadSessionInput(
        saver.sessionIdFor(fixture.threadId),
        'langgraph',
        fixture.threadId,
        '',
        undefined,
      ),
      messages: records,
    });
    await expect(new SessionKitSaver(damaged).getTuple(config)).rejects.toThrow(/missing write/);
  });
});
