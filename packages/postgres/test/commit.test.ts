// commit.ts: a commit writes only its new rows.
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
});
