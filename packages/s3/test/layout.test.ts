// What the layout promises: a window reads only the objects holding it, folding keeps a
// load's object count bounded, and each revision is one version object.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { type Message, newSessionId } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { FOLD_AFTER } from '../src/fold.js';
import { storeOn, useTarget } from './harness.js';
import { readHead } from './raw.js';

const server = useTarget();

const msg = (content: string): Message => ({ role: 'user', content });

describe('layout', () => {
  it('a window reads only the versions that hold it; the base only when it reaches it', async () => {
    const store = await storeOn(server.target);
    const s = await store.create({ id: newSessionId(), messages: [msg('a'), msg('b'), msg('c')] });
    for (let i = 0; i < 5; i++) await store.commit(s.id, { append: [msg(`p${i}`)] });
    let before = store.stats.bodyReads;
    expect(await store.loadMessages(s.id, { last: 2 })).toEqual([msg('p3'), msg('p4')]);
    expect(store.stats.bodyReads - before).toBe(2);
    before = store.stats.bodyReads;
    expect(await store.loadMessages(s.id, { offset: 1, limit: 3 })).toEqual([
      msg('b'),
      msg('c'),
      msg('p0'),
    ]);
    expect(store.stats.bodyReads - before).toBe(2);
    await store.close();
  });

  it("a store's concurrent commits of one session land in call order, none lost", async () => {
    // changeSession runs one store's writes of a session one at a time: they never race
    // each other for a version (the first answered would win every round).
    const store = await storeOn(server.target);
    const s = await store.create({ id: newSessionId() });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.commit(s.id, { append: [msg(`c${i}`)] })),
    );
    expect(results.map((r) => r.revision)).toEqual(Array.from({ length: 10 }, (_, i) => i + 2));
    expect(await store.loadMessages(s.id)).toEqual(
      Array.from({ length: 10 }, (_, i) => msg(`c${i}`)),
    );
    await store.close();
  });

  it('folding bounds the objects a load reads, and every revision is one version object', async () => {
    const store = await storeOn(server.target);
    const s = await store.create({ id: newSessionId(), messages: [msg('first')] });
    const commits = FOLD_AFTER + 8;
    for (let i = 0; i < commits; i++) await store.commit(s.id, { append: [msg(`m${i}`)] });
    // The fold runs in the background.
    await store.settled();
    const head = await readHead(server.raw, store, s.id);
    expect(head.state.chain.base).toMatchObject({ folded: true, n: FOLD_AFTER + 1 });
    const before = store.stats.bodyReads;
    const loaded = await store.load(s.id);
    expect(loaded.messages).toHaveLength(1 + commits);
    expect(loaded.messages.at(-1)).toEqual(msg(`m${commits - 1}`));
    // The snapshot (of version FOLD_AFTER + 1) and the versions after it.
    expect(store.stats.bodyReads - before).toBe(1 + (1 + commits) - (FOLD_AFTER + 1));
    const listed = await server.raw.send(
      new ListObjectsV2Command({
        Bucket: server.target.bucket,
        Prefix: `${store.prefix}s/${s.id}/g/${head.gen}/v/`,
      }),
    );
    expect(listed.KeyCount).toBe(1 + commits);
    await store.close();
  });
});
