// The stored layout: threads written by the releases of formats 1 and 2 (a fixture of each
// one's records, with writes that landed before their checkpoint) read and go on with this
// saver; each message's bytes are stored once, and format 3 leaves out of a record what the
// rest of it tells.
import { readFileSync } from 'node:fs';
import type { BaseMessage } from '@langchain/core/messages';
import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { storedRecord, threadRecordOf } from '../src/format.js';
import { threadSessionInput } from '../src/ids.js';
import { SessionKitSaver } from '../src/index.js';
import type { Blob, ThreadRecord } from '../src/records.js';
import { chatGraph, userTurn } from './support/graph.js';

interface Fixture {
  threadId: string;
  expected: {
    latest: string;
    listed: { id: string; messages: string[]; writes: [string, string][] }[];
  };
  records: ThreadRecord[];
}

const fixtures = ([1, 2] as const).map((format) => ({
  format,
  fixture: JSON.parse(
    readFileSync(new URL(`./fixtures/format-${format}-thread.json`, import.meta.url), 'utf8'),
  ) as Fixture,
}));
const fixture = fixtures[0]!.fixture;
const config = { configurable: { thread_id: fixture.threadId } };

async function storeWithFixture(
  f: Fixture,
): Promise<{ store: MemoryStore<unknown>; sessionId: string }> {
  const store = new MemoryStore<unknown>();
  const sessionId = new SessionKitSaver(store).sessionIdFor(f.threadId);
  await store.create({
    ...threadSessionInput(sessionId, 'langgraph', f.threadId, '', undefined),
    messages: f.records,
  });
  return { store, sessionId };
}

const contents = (messages: unknown) =>
  ((messages ?? []) as BaseMessage[]).map((m) => String(m.content));

describe.each(fixtures)('format $format threads (earlier releases)', ({ format, fixture: f }) => {
  const threadConfig = { configurable: { thread_id: f.threadId } };

  it('are read as that release read them: checkpoints, values and pending writes', async () => {
    expect(f.records.every((r) => r.lg === format)).toBe(true);
    const { store } = await storeWithFixture(f);
    const saver = new SessionKitSaver(store);
    const latest = await saver.getTuple(threadConfig);
    expect(latest?.checkpoint.id).toBe(f.expected.latest);
    const listed = [];
    for await (const t of saver.list(threadConfig))
      listed.push({
        id: t.checkpoint.id,
        messages: contents(t.checkpoint.channel_values.messages),
        writes: t.pendingWrites?.map(([task, channel]) => [task, channel]),
      });
    expect(listed).toEqual(f.expected.listed);
  });

  it('go on with format 3 records that a new saver reads back', async () => {
    const { store, sessionId } = await storeWithFixture(f);
    const before = f.expected.listed[0]!.messages;
    const state = await chatGraph(new SessionKitSaver(store), 0).invoke(
      userTurn('fourth'),
      threadConfig,
    );
    expect(contents(state.messages)).toEqual([...before, 'fourth', 'reply 1 ', 'reply 1 !']);
    const fresh = await new SessionKitSaver(store).getTuple(threadConfig);
    expect(contents(fresh?.checkpoint.channel_values.messages)).toEqual(contents(state.messages));
    const records = (await store.load(sessionId)).messages as ThreadRecord[];
    expect(records.slice(f.records.length).every((r) => r.lg === 3)).toBe(true);
  });

  it('keep their checkpoints through keepLast, which rewrites them in format 3', async () => {
    const { store, sessionId } = await storeWithFixture(f);
    const saver = new SessionKitSaver(store);
    expect(await saver.keepLast(f.threadId, 3)).toBe(f.expected.listed.length - 3);
    const listed = [];
    for await (const t of new SessionKitSaver(store).list(threadConfig))
      listed.push({
        id: t.checkpoint.id,
        messages: contents(t.checkpoint.channel_values.messages),
      });
    expect(listed).toEqual(
      f.expected.listed.slice(0, 3).map(({ id, messages }) => ({ id, messages })),
    );
    const records = (await store.load(sessionId)).messages as ThreadRecord[];
    expect(records.every((r) => r.lg === 3)).toBe(true);
  });

  it('read back as the same records once stored in format 3', () => {
    for (const record of f.records)
      expect(threadRecordOf(storedRecord(record))).toEqual({ ...record, lg: 3 });
  });
});

describe('format 3', () => {
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

  it("stores a thread in at most twice its messages' JSON, a first input twice", async () => {
    const store = new MemoryStore<unknown>();
    const saver = new SessionKitSaver(store);
    const graph = chatGraph(saver, 1000);
    const input = 'the first input '.padEnd(1000, '-');
    await graph.invoke(userTurn(input), config);
    for (let i = 0; i < 40; i++) await graph.invoke({ messages: [] }, config);
    const stored = JSON.stringify(
      (await store.load(saver.sessionIdFor(fixture.threadId))).messages,
    );
    // The input checkpoint's __start__ value and the start task's writes; the checkpoint
    // after them points at those writes.
    expect(stored.split(input).length - 1).toBe(2);
    const state = await graph.getState(config);
    expect(state.values.messages).toHaveLength(83);
    expect(stored.length).toBeLessThan(2 * JSON.stringify(state.values.messages).length);
  });

  it('refuses a value that points at a write of another checkpoint (a damaged history)', async () => {
    const store = new MemoryStore<unknown>();
    const saver = new SessionKitSaver(store);
    await chatGraph(saver).invoke(userTurn('hello'), config);
    const stored = (await store.load(saver.sessionIdFor(fixture.threadId))).messages as Record<
      string,
      unknown
    >[];
    const records = stored.map((r) => threadRecordOf(r)!);
    const pointing = records.findIndex(
      (r) => r.k === 'c' && Object.values(r.b).some((b) => 'd' in b && b.d.w !== undefined),
    );
    const parent = (records[pointing] as { parent?: string } | undefined)?.parent;
    const other = records.find((r) => r.k === 'w' && r.to !== parent);
    expect(pointing).toBeGreaterThanOrEqual(0);
    expect(other).toBeDefined();
    for (const b of Object.values(stored[pointing]!.b as Record<string, Blob>))
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
      messages: stored,
    });
    await expect(new SessionKitSaver(damaged).getTuple(config)).rejects.toThrow(/missing write/);
  });
});
