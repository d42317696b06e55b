// Operation ids and truncation on disk (session/operations.ts, session/commit.ts): where the
// ids live (log records, then snapshot metas), and what a pop writes.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFrames } from '../src/format/frame.js';
import type { LogMeta, SnapshotMeta } from '../src/format/records.js';
import { msg, snapshotsOf, storeFolderFixture } from './helpers.js';

const fixture = storeFolderFixture();
const sessionDir = (id: string) => join(fixture.dir, 'sessions', id);
const logOf = (id: string) => {
  const name = readdirSync(sessionDir(id)).find((n) => /^log-\d+\.skr$/.test(n));
  return name === undefined ? undefined : join(sessionDir(id), name);
};

describe('operation ids on disk', () => {
  it('ride in the log record, then in the snapshot a fold writes, and survive a reopen', async () => {
    const store = fixture.open({ snapshotEvery: 3 });
    await store.create({ id: 's' });
    const results = [];
    for (let i = 0; i < 12; i++) {
      results.push(await store.commit('s', { operationId: `op-${i}`, append: [msg(`m${i}`)] }));
    }
    // Folds happened: the newest snapshot's meta carries the ids it folded.
    const snaps = snapshotsOf(fixture.dir, 's');
    const snap = parseFrames<SnapshotMeta>(readFileSync(snaps[snaps.length - 1]!)).frames[0]!;
    expect(snap.meta.header.revision).toBeGreaterThan(1);
    expect(snap.meta.ops?.map((o) => o[0])).toContain('op-0');
    const log = logOf('s');
    const records = log ? parseFrames<LogMeta>(readFileSync(log)).frames : [];
    for (const r of records) expect(r.meta.op).toMatch(/^op-\d+$/);
    await store.close();
    // A store that never saw the writes answers every id with its first result.
    const reopened = fixture.open();
    for (let i = 0; i < 12; i++) {
      const again = await reopened.commit('s', { operationId: `op-${i}`, append: [msg('no')] });
      expect(again.revision, `op-${i}`).toBe(results[i]!.revision);
      expect(again.messageCount).toBe(results[i]!.messageCount);
    }
    expect(await reopened.loadMessages('s')).toHaveLength(12);
  });

  it('a replace keeps the ids in its snapshot, a save keeps them too', async () => {
    const store = fixture.open();
    await store.create({ id: 's', messages: [msg('a')] });
    const first = await store.commit('s', { operationId: 'one', append: [msg('b')] });
    const replaced = await store.commit('s', { operationId: 'two', replace: [msg('c')] });
    const loaded = await store.load('s');
    await store.save({ ...loaded, title: 'saved' });
    const peer = fixture.open();
    expect((await peer.commit('s', { operationId: 'one' })).revision).toBe(first.revision);
    expect((await peer.commit('s', { operationId: 'two' })).revision).toBe(replaced.revision);
    expect((await peer.load('s')).messages).toEqual([msg('c')]);
  });
});

describe('truncate on disk', () => {
  it('a pop from a long history appends one small record, whatever the history holds', async () => {
    const store = fixture.open({ snapshotEvery: 1_000_000 });
    const messages = Array.from({ length: 2000 }, (_, i) => msg(`message ${i} `.repeat(20)));
    await store.create({ id: 's', messages });
    await store.commit('s', { append: [msg('tail')] });
    const log = logOf('s')!;
    const before = statSync(log).size;
    const r = await store.commit('s', { expectedMessageCount: 2001, truncate: 2000 });
    expect(r.messageCount).toBe(2000);
    // The record: a prefix, a meta (the header) and a tail; no message bytes.
    expect(statSync(log).size - before).toBeLessThan(1024);
    const records = parseFrames<LogMeta>(readFileSync(log)).frames;
    expect(records[records.length - 1]!.meta).toMatchObject({ truncate: 2000, appended: 0 });
    const window = await store.loadMessageWindow('s', { last: 2 });
    expect(window).toMatchObject({ offset: 1998, messageCount: 2000 });
    expect(window.messages).toEqual(messages.slice(1998));
    expect((await store.list({ query: 'tail' })).length).toBe(0);
  });
});
