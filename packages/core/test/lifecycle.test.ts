import { describe, expect, it } from 'vitest';
import { errorsFor } from '../src/errors.js';
import { archive, fork, latest, rename, unarchive } from '../src/helpers/lifecycle.js';
import { isValidId } from '../src/ids.js';
import type { Message } from '../src/types.js';
import { codeOf } from './fixtures/codes.js';
import { TinyStore } from './fixtures/tiny-store.js';

const user = (content: string): Message => ({ role: 'user', content });
const at = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s));

describe('archive / unarchive', () => {
  it('sets and clears archivedAt; archived sessions leave default listings', async () => {
    const store = new TinyStore();
    await store.create({ id: 's1', folder: '/w' });
    const when = new Date('2024-03-03T03:03:03.003Z');
    const r = await archive(store, 's1', when);
    expect(r.revision).toBe(2);
    expect((await store.load('s1')).archivedAt).toEqual(when);
    expect(await store.list({ folder: '/w' })).toEqual([]);
    expect((await store.list({ folder: '/w', includeArchived: true })).map((s) => s.id)).toEqual([
      's1',
    ]);

    await unarchive(store, 's1');
    const s = await store.load('s1');
    expect(s.archivedAt).toBeUndefined();
    expect(s.revision).toBe(3);
    expect((await store.list({ folder: '/w' })).map((x) => x.id)).toEqual(['s1']);
  });

  it('archives at now by default and keeps the history', async () => {
    const store = new TinyStore();
    await store.create({ id: 's1', messages: [user('a')] });
    const before = Date.now();
    await archive(store, 's1');
    const s = await store.load('s1');
    expect(s.archivedAt!.getTime()).toBeGreaterThanOrEqual(before);
    expect(s.messages).toEqual([user('a')]);
  });

  it('throws not_found and invalid_argument', async () => {
    const store = new TinyStore();
    expect(await codeOf(archive(store, 'missing'))).toBe('not_found');
    expect(await codeOf(unarchive(store, 'a/b'))).toBe('invalid_argument');
  });
});

describe('rename', () => {
  it('sets the title and nothing else', async () => {
    const store = new TinyStore();
    await store.create({ id: 's1', title: 'old', messages: [user('a')], metadata: { k: 'v' } });
    await rename(store, 's1', 'New title ✨');
    const s = await store.load('s1');
    expect(s).toMatchObject({ title: 'New title ✨', metadata: { k: 'v' }, revision: 2 });
    expect(s.messages).toEqual([user('a')]);
  });

  it('rejects a bad title', async () => {
    const store = new TinyStore();
    await store.create({ id: 's1' });
    expect(await codeOf(rename(store, 's1', 5 as unknown as string))).toBe('invalid_argument');
    expect(await codeOf(rename(store, 's1', 'a\0b'))).toBe('invalid_argument');
    expect((await store.load('s1')).revision).toBe(1);
  });
});

describe('fork', () => {
  it('copies the full history, keeps parentId and records forkedFrom', async () => {
    const store = new TinyStore();
    await store.create({ id: 'root' });
    await store.create({
      id: 'child',
      parentId: 'root',
      branchedAtTurn: 0,
      title: 'Child',
      messages: [user('a'), { role: 'assistant', content: 'b' }],
      metadata: { k: 'v' },
      state: { plan: ['x'] },
      tokenCount: 12,
    });
    const f = await fork(store, 'child');
    expect(isValidId(f.id)).toBe(true);
    expect(f.id).not.toBe('child');
    expect(f).toMatchObject({
      parentId: 'root',
      branchedAtTurn: 0,
      title: 'Child',
      metadata: { k: 'v', forkedFrom: 'child' },
      state: { plan: ['x'] },
      tokenCount: 12,
      revision: 1,
      children: [],
    });
    expect((await store.load(f.id)).messages).toEqual([
      user('a'),
      { role: 'assistant', content: 'b' },
    ]);
    // The original is unchanged; the parent now lists both.
    const original = await store.load('child');
    expect(original.metadata).toEqual({ k: 'v' });
    expect(original.revision).toBe(1);
    expect((await store.load('root')).children).toEqual(['child', f.id]);
  });

  it('starts unarchived even when the original is archived', async () => {
    const store = new TinyStore();
    await store.create({ id: 'old', archivedAt: at(5), messages: [user('m')] });
    const f = await fork(store, 'old');
    expect(f.archivedAt).toBeUndefined();
    expect((await store.list({ includeArchived: false })).map((s) => s.id)).toEqual([f.id]);
  });

  it('makes a root when the original is a root, with a chosen id', async () => {
    const store = new TinyStore();
    await store.create({ id: 'r', messages: [user('m')] });
    const f = await fork(store, 'r', 'r-fork');
    expect(f.id).toBe('r-fork');
    expect(f.parentId).toBeUndefined();
    expect(f.metadata).toEqual({ forkedFrom: 'r' });
  });

  it('does not copy the original’s children, and gets fresh timestamps', async () => {
    const store = new TinyStore();
    await store.create({ id: 'p', createdAt: at(1), updatedAt: at(2) });
    await store.create({ id: 'kid', parentId: 'p' });
    const f = await fork(store, 'p');
    expect(f.children).toEqual([]);
    expect(f.createdAt.getTime()).toBeGreaterThan(at(2).getTime());
  });

  it('throws not_found, exists and invalid_argument', async () => {
    const store = new TinyStore();
    await store.create({ id: 'a' });
    await store.create({ id: 'b' });
    expect(await codeOf(fork(store, 'missing'))).toBe('not_found');
    expect(await codeOf(fork(store, 'a', 'b'))).toBe('exists');
    expect(await codeOf(fork(store, 'a', '../evil'))).toBe('invalid_argument');
    expect(await codeOf(fork(store, '.a'))).toBe('invalid_argument');
  });
});

describe('latest', () => {
  it('is null for an empty or unknown folder', async () => {
    const store = new TinyStore();
    expect(await latest(store, '/w')).toBeNull();
    await store.create({ id: 'x', folder: '/other' });
    expect(await latest(store, '/w')).toBeNull();
  });

  it('returns the most recently updated unarchived session of the folder, with messages', async () => {
    const store = new TinyStore();
    await store.create({ id: 'old', folder: '/w', updatedAt: at(1) });
    await store.create({ id: 'new', folder: '/w', updatedAt: at(5), messages: [user('hi')] });
    await store.create({ id: 'archived', folder: '/w', updatedAt: at(9), archivedAt: at(9) });
    await store.create({ id: 'elsewhere', folder: '/x', updatedAt: at(10) });
    const s = await latest(store, '/w');
    expect(s?.id).toBe('new');
    expect(s?.messages).toEqual([user('hi')]);
  });

  it('lists again when the session it found is deleted before it loads', async () => {
    const store = new TinyStore();
    await store.create({ id: 'older', folder: '/w', updatedAt: at(1) });
    await store.create({ id: 'newest', folder: '/w', updatedAt: at(2) });
    // A concurrent delete lands between the listing and the load.
    store.hooks.beforeLoad = async (id) => {
      if (id === 'newest') await store.delete('newest');
    };
    const s = await latest(store, '/w');
    expect(s?.id).toBe('older');
    expect(store.calls.list).toBe(2);
  });

  it('returns null when the only session is deleted in between', async () => {
    const store = new TinyStore();
    await store.create({ id: 'only', folder: '/w' });
    store.hooks.beforeLoad = async (id) => {
      await store.delete(id);
    };
    expect(await latest(store, '/w')).toBeNull();
  });

  it('gives up with not_found after a few attempts when sessions keep vanishing', async () => {
    const store = new TinyStore();
    await store.create({ id: 'ghost', folder: '/w' });
    // The listing keeps showing a session that every load misses.
    store.hooks.beforeLoad = async () => {
      throw errorsFor('tiny').notFound('ghost');
    };
    expect(await codeOf(latest(store, '/w'))).toBe('not_found');
    expect(store.calls.list).toBe(5);
  });

  it('does not retry other errors', async () => {
    const store = new TinyStore();
    await store.create({ id: 's', folder: '/w' });
    store.hooks.beforeLoad = async () => {
      throw errorsFor('tiny').unavailable('down');
    };
    expect(await codeOf(latest(store, '/w'))).toBe('unavailable');
    expect(store.calls.list).toBe(1);
  });

  it('validates the folder', async () => {
    expect(await codeOf(latest(new TinyStore(), 5 as unknown as string))).toBe('invalid_argument');
  });
});
