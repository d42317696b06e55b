import type { Message, Session } from '@sessionkit/core';
import { isSessionKitError, newSessionId, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryBackend, MemoryStore, storeAdapter } from '../src/index.js';

const user = (content: string): Message => ({ role: 'user', content });

async function expectCode(
  promise: Promise<unknown>,
  code: Parameters<typeof isSessionKitError>[1],
) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a ${code} error`).toBeDefined();
  expect(isSessionKitError(error, code), String(error)).toBe(true);
}

describe('MemoryStore › shared backend', () => {
  it('two instances on one backend see each other’s writes', async () => {
    const backend = new MemoryBackend();
    const a = new MemoryStore({ backend });
    const b = new MemoryStore({ backend });
    const id = newSessionId();
    await a.create({ id, title: 'shared', messages: [user('hi')] });

    const seen = await b.load(id);
    expect(seen.title).toBe('shared');
    expect(seen.messages).toEqual([user('hi')]);

    await b.commit(id, { append: [user('from b')] });
    expect(await a.loadMessages(id)).toEqual([user('hi'), user('from b')]);
    expect((await a.list()).map((s) => [s.id, s.messageCount])).toEqual([[id, 2]]);
  });

  it('a stale revision from one instance conflicts with a write through the other', async () => {
    const backend = new MemoryBackend();
    const a = new MemoryStore({ backend });
    const b = new MemoryStore({ backend });
    const id = newSessionId();
    const created = await a.create({ id });
    await b.save({ ...created, title: 'b wins' });
    await expectCode(a.save({ ...created, title: 'a loses' }), 'conflict');
    expect((await a.load(id)).title).toBe('b wins');
  });

  it('stores without a backend option do not share data', async () => {
    const a = new MemoryStore();
    const b = new MemoryStore();
    const id = newSessionId();
    await a.create({ id });
    await expectCode(b.load(id), 'not_found');
    expect(a.backend).not.toBe(b.backend);
  });

  it('rejects a backend that is not a MemoryBackend', () => {
    expect(() => new MemoryStore({ backend: {} as MemoryBackend })).toThrow(/MemoryBackend/);
  });
});

describe('MemoryStore › close', () => {
  it('is idempotent, fails every later call with closed, and leaves other instances open', async () => {
    const backend = new MemoryBackend();
    const a = new MemoryStore({ backend });
    const b = new MemoryStore({ backend });
    const id = newSessionId();
    await a.create({ id });
    await a.close();
    await a.close();

    const calls: Array<() => Promise<unknown>> = [
      () => a.create({ id: newSessionId() }),
      () => a.load(id),
      () => a.save({} as Session),
      () => a.delete(id),
      () => a.list(),
      () => a.commit(id, {}),
      () => a.branch(id, 0),
      () => a.clone(id),
      () => a.merge(id),
      () => a.loadMessages(id),
      () => a.saveRuntimeStatus(id, null),
      () => a.loadRuntimeStatus(id),
      () => a.bind('c', 'k', '', id),
      () => a.resolve('c', 'k', '', ''),
      () => a.unbind('c', 'k', ''),
      () => a.follow('c', 'k', ''),
      () => a.touch('c', 'k', ''),
      () => a.recent(),
      () => a.append(id, 'x'),
      () => a.events(id),
      () => a.enforceMax(1),
      () => a.repair(),
    ];
    for (const call of calls) await expectCode(call(), 'closed');

    // Nothing was deleted or created by the rejected calls; the other instance still works.
    expect(backend.records.size).toBe(1);
    expect((await b.load(id)).id).toBe(id);
    await b.commit(id, { append: [user('still open')] });
    expect((await b.load(id)).messages).toHaveLength(1);
  });
});

describe('MemoryStore › message body reads', () => {
  it('list and search never read message bodies; load and the history readers do', async () => {
    const store = new MemoryStore();
    const { stats } = store.backend;
    const id = newSessionId();
    await store.create({ id, title: 'needle title', messages: [user('a haystack needle')] });
    await store.commit(id, { append: [user('more hay')] });
    expect(stats.messageBodyReads).toBe(0);

    await store.list();
    await store.list({ query: 'needle' });
    await store.list({ query: 'HAYSTACK' });
    expect((await store.list({ query: 'more hay' })).map((s) => s.id)).toEqual([id]);
    expect(stats.messageBodyReads).toBe(0);

    await store.load(id);
    expect(stats.messageBodyReads).toBe(1);
    await store.loadMessages(id);
    expect(stats.messageBodyReads).toBe(2);
    const child = await store.branch(id, 1);
    expect(stats.messageBodyReads).toBe(3);
    await store.clone(id);
    expect(stats.messageBodyReads).toBe(4);
    await store.merge(child.id).catch(() => undefined); // diverged: reads nothing
    expect(stats.messageBodyReads).toBe(4);
  });

  it('list and search work when the records’ message arrays cannot be read', async () => {
    const store = new MemoryStore();
    const id = newSessionId();
    await store.create({ id, title: 'kept', messages: [user('find me by text')] });
    const record = store.backend.records.get(id)!;
    record.messages = new Proxy(record.messages, {
      get() {
        throw new Error('list touched message bodies');
      },
    });
    const hits = await store.list({ query: 'by text' });
    expect(hits.map((s) => [s.id, s.messageCount])).toEqual([[id, 1]]);
  });

  it('an append pushes onto the stored array instead of copying it', async () => {
    const store = new MemoryStore();
    const id = newSessionId();
    await store.create({ id, messages: [user('one')] });
    const before = store.backend.records.get(id)!.messages;
    await store.commit(id, { append: [user('two'), user('three')] });
    const after = store.backend.records.get(id)!.messages;
    expect(after).toBe(before);
    expect(after).toEqual([user('one'), user('two'), user('three')]);
    expect(store.backend.records.get(id)!.searchTexts).toEqual(['one', 'two', 'three']);
  });
});

describe('MemoryStore › index and repair', () => {
  it('keeps the index in step with every write', async () => {
    const store = new MemoryStore();
    const { index } = store.backend;
    const parent = await store.create({ id: newSessionId(), messages: [user('p')] });
    const child = await store.branch(parent.id, 1);
    await store.commit(child.id, { append: [user('Second')], patch: { title: 'T' } });
    expect(index.get(child.id)).toMatchObject({
      title: 'T',
      messageCount: 2,
      parentId: parent.id,
      searchText: ['p', 'second'],
      revision: 2,
    });
    await store.delete(parent.id);
    expect(index.has(parent.id)).toBe(false);
    expect(index.get(child.id)?.parentId).toBeUndefined();
    expect(store.backend.records.get(child.id)?.header.parentId).toBeUndefined();
    expect((await store.repair()).indexEntriesFixed).toBe(0);
  });

  it('repair fixes damaged, missing and stray index entries and tree links', async () => {
    const store = new MemoryStore();
    const b = store.backend;
    const root = await store.create({ id: 'root', title: 'Root', messages: [user('x')] });
    const kid = await store.branch(root.id, 1);
    const other = await store.create({ id: 'other', title: 'Other' });

    b.index.get(other.id)!.title = 'damaged';
    b.index.delete(root.id);
    b.index.set('ghost', { ...b.index.get(kid.id)!, id: 'ghost' });
    b.childrenOf.delete(root.id);

    expect(await store.list({ query: 'Other' })).toEqual([]);
    const report = await store.repair();
    expect(report).toEqual({ rebuilt: 3, skippedCorrupt: [], indexEntriesFixed: 4 });

    expect((await store.list({ query: 'Other' })).map((s) => s.id)).toEqual([other.id]);
    expect((await store.list()).map((s) => s.id).sort()).toEqual([kid.id, 'other', 'root'].sort());
    expect((await store.load(root.id)).children).toEqual([kid.id]);
    expect(b.index.has('ghost')).toBe(false);
    expect(await store.repair()).toEqual({ rebuilt: 3, skippedCorrupt: [], indexEntriesFixed: 0 });
  });

  it('reports a record with a corrupt header and leaves it out of the index', async () => {
    const store = new MemoryStore();
    await store.create({ id: 'good' });
    await store.create({ id: 'bad' });
    const bad = store.backend.records.get('bad')!;
    (bad.header as unknown as Record<string, unknown>).revision = 'seven';

    const report = await store.repair();
    expect(report.rebuilt).toBe(1);
    expect(report.indexEntriesFixed).toBe(1);
    expect(report.skippedCorrupt).toHaveLength(1);
    expect(report.skippedCorrupt[0]!.id).toBe('bad');
    expect(report.skippedCorrupt[0]!.reason).toMatch(/revision/);
    expect((await store.list()).map((s) => s.id)).toEqual(['good']);
    // The corrupt record's data is left as it was; using it fails, deleting it works.
    expect(store.backend.records.get('bad')).toBe(bad);
    await expectCode(store.load('bad'), 'corrupt');
    await expectCode(store.commit('bad', { append: [user('x')] }), 'corrupt');
    expect(bad.messages).toEqual([]);
    await store.delete('bad');
    expect(store.backend.records.has('bad')).toBe(false);
    await expectCode(store.load('bad'), 'not_found');
  });
});

describe('MemoryStore › openStore', () => {
  beforeAll(() => registerStoreAdapter(storeAdapter));

  it('memory: opens a store on a fresh backend each time', async () => {
    const a = await openStore('memory:');
    const b = await openStore('memory:');
    const id = newSessionId();
    await a.create({ id });
    await expectCode(b.load(id), 'not_found');
    expect(a).toBeInstanceOf(MemoryStore);
  });

  it('memory: URLs take no query options and reject them', async () => {
    await expectCode(openStore('memory:?bogus=1'), 'invalid_argument');
    await expectCode(openStore(`memory:t${newSessionId()}?sync=1`), 'invalid_argument');
    await expectCode(openStore('memory:#frag'), 'invalid_argument');
  });

  it('memory:NAME shares one process-wide backend per name', async () => {
    const name = `t${newSessionId()}`;
    const a = await openStore(`memory:${name}`);
    const b = await openStore(`memory:${name}`);
    const c = await openStore(`memory:${name}-other`);
    const id = newSessionId();
    await a.create({ id, title: 'named' });
    expect((await b.load(id)).title).toBe('named');
    await expectCode(c.load(id), 'not_found');
    expect((a as MemoryStore).backend).toBe(MemoryBackend.named(name));
    await a.close();
    expect((await b.load(id)).title).toBe('named');
  });

  it('accepts a backend option with a bare memory: URL and rejects unknown options', async () => {
    const backend = new MemoryBackend();
    const store = await openStore('memory:', { backend });
    expect((store as MemoryStore).backend).toBe(backend);
    await expectCode(openStore('memory:', { nope: 1 }), 'invalid_argument');
    await expectCode(openStore('memory:x', { backend }), 'invalid_argument');
  });
});

describe('MemoryStore › deep copies', () => {
  it('values handed in are copied on write', async () => {
    const store = new MemoryStore();
    const id = newSessionId();
    const messages = [user('original')];
    const metadata = { k: 'v' };
    const state = { plan: ['a'] };
    await store.create({ id, messages, metadata, state });
    messages[0]!.content = 'mutated';
    messages.push(user('extra'));
    metadata.k = 'mutated';
    state.plan.push('b');

    const appended = [user('appended')];
    await store.commit(id, { append: appended });
    appended[0]!.content = 'mutated';

    const payload = { n: 1 };
    await store.append(id, 'evt', payload);
    payload.n = 2;
    const status = { ok: true };
    await store.saveRuntimeStatus(id, status);
    status.ok = false;

    const loaded = await store.load(id);
    expect(loaded.messages).toEqual([user('original'), user('appended')]);
    expect(loaded.metadata).toEqual({ k: 'v' });
    expect(loaded.state).toEqual({ plan: ['a'] });
    expect((await store.events(id))[0]!.payload).toEqual({ n: 1 });
    expect(await store.loadRuntimeStatus(id)).toEqual({ ok: true });
  });

  it('values handed out are fresh copies', async () => {
    const store = new MemoryStore();
    const id = newSessionId();
    const created = await store.create({ id, messages: [user('x')], metadata: { k: 'v' } });
    created.messages[0]!.content = 'mutated';
    created.metadata.k = 'mutated';
    created.createdAt.setTime(0);

    const loaded = await store.load(id);
    loaded.messages.push(user('y'));
    loaded.children.push('nope');
    const history = await store.loadMessages(id);
    history[0]!.content = 'mutated';
    const [summary] = await store.list();
    summary!.metadata.k = 'mutated';
    summary!.updatedAt.setTime(0);
    await store.append(id, 'e', { a: [1] });
    const [event] = await store.events(id);
    (event!.payload as { a: number[] }).a.push(2);
    const status = { deep: { v: 1 } };
    await store.saveRuntimeStatus(id, status);
    const readStatus = (await store.loadRuntimeStatus(id)) as typeof status;
    readStatus.deep.v = 2;

    const again = await store.load(id);
    expect(again.messages).toEqual([user('x')]);
    expect(again.metadata).toEqual({ k: 'v' });
    expect(again.children).toEqual([]);
    expect(again.createdAt.getTime()).not.toBe(0);
    expect(store.backend.index.get(id)!.updatedAt.getTime()).not.toBe(0);
    expect((await store.events(id))[0]!.payload).toEqual({ a: [1] });
    expect(await store.loadRuntimeStatus(id)).toEqual({ deep: { v: 1 } });
  });

  it('a branch does not share message objects with its parent', async () => {
    const store = new MemoryStore();
    const parent = await store.create({ id: newSessionId(), messages: [user('p')] });
    const child = await store.branch(parent.id, 1);
    await store.commit(child.id, { replace: [user('c')] });
    const own = store.backend.records.get(child.id)!.messages[0];
    expect(own).not.toBe(store.backend.records.get(parent.id)!.messages[0]);
    expect((await store.load(parent.id)).messages).toEqual([user('p')]);
  });
});

describe('MemoryStore › router clock', () => {
  it('orders recent() by bind and touch order even within one millisecond', async () => {
    const store = new MemoryStore();
    const id = newSessionId();
    await store.create({ id });
    await store.bind('tg', 'a', '', id);
    await store.bind('tg', 'b', '', id);
    await store.bind('tg', 'c', '', id);
    await store.touch('tg', 'a', '');
    const rows = await store.recent();
    expect(rows.map((r) => r.chatKey)).toEqual(['a', 'c', 'b']);
    const times = rows.map((r) => r.updatedAt.getTime());
    expect(times[0]!).toBeGreaterThan(times[1]!);
    expect(times[1]!).toBeGreaterThan(times[2]!);
  });
});
