// commit.ts: a commit writes only its new rows; a truncate deletes only the dropped ones.
import { isSessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the commit tests did not run');

describe.runIf(available)('commit › row writes', () => {
  it('a commit inserts only its new rows and never rewrites stored ones', async () => {
    const store = await freshStore();
    try {
      await store.create({ id: 'grow', messages: [{ role: 'user', content: 'first' }] });
      const xmin = async () =>
        (
          await admin().query(
            `SELECT seq, xmin::text AS x FROM "${store.schema}".messages WHERE session_id = 'grow' ORDER BY seq`,
          )
        ).rows as { seq: number; x: string }[];
      const before = await xmin();
      await store.commit('grow', { append: [{ role: 'assistant', content: 'second' }] });
      const after = await xmin();
      expect(after).toHaveLength(2);
      expect(after[0]).toEqual(before[0]);
      await store.commit('grow', { replace: [{ role: 'user', content: 'only' }] });
      expect(await store.loadMessages('grow')).toEqual([{ role: 'user', content: 'only' }]);
    } finally {
      await destroyStore(store);
    }
  });

  it('a truncate deletes only the dropped rows: the kept rows and search rows are untouched', async () => {
    const store = await freshStore();
    try {
      const messages = Array.from({ length: 50 }, (_, i) => ({
        role: 'user',
        content: `message ${i} word${i}`,
      }));
      await store.create({ id: 'pop', messages });
      await store.indexPendingSearch();
      const rows = async () =>
        (
          await admin().query(
            `SELECT seq, xmin::text AS x FROM "${store.schema}".messages WHERE session_id = 'pop' ORDER BY seq`,
          )
        ).rows as { seq: number; x: string }[];
      const before = await rows();
      await store.commit('pop', { truncate: 48, append: [{ role: 'user', content: 'tail' }] });
      const after = await rows();
      expect(after).toHaveLength(49);
      expect(after.slice(0, 48)).toEqual(before.slice(0, 48));
      const found = async (q: string) => (await store.list({ query: q })).map((s) => s.id);
      expect(await found('word47')).toEqual(['pop']);
      expect(await found('word48')).toEqual([]);
      expect(await found('tail')).toEqual(['pop']);
    } finally {
      await destroyStore(store);
    }
  });

  it('an expectedMessageCount past the integer column is a conflict, not a driver error', async () => {
    const store = await freshStore();
    try {
      await store.create({ id: 'big' });
      const outcome = await store
        .commit('big', { expectedMessageCount: Number.MAX_SAFE_INTEGER, append: [] })
        .then(
          () => 'resolved',
          (e: unknown) => (isSessionKitError(e) ? e.code : String(e)),
        );
      expect(outcome).toBe('conflict');
    } finally {
      await destroyStore(store);
    }
  });
});
