// repair.ts (and delete/enforceMax): no derived rows left behind; repair drops orphans.
import { describe, expect, it } from 'vitest';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the repair tests did not run');

describe.runIf(available)('repair › derived data stays exact', () => {
  it('delete and enforceMax leave no message or search rows behind; repair drops orphans', async () => {
    const store = await freshStore();
    const count = async (table: string) =>
      (await admin().query(`SELECT count(*)::int AS n FROM "${store.schema}".${table}`)).rows[0].n;
    try {
      for (let i = 0; i < 4; i++) {
        await store.create({
          id: `d-${i}`,
          title: `t${i}`,
          updatedAt: new Date(Date.UTC(2024, 0, 1 + i)),
          messages: [{ role: 'user', content: `m${i}` }],
        });
      }
      await store.delete('d-0');
      expect(await count('messages')).toBe(3);
      expect(await count('search_rows')).toBe(6);
      expect(await store.enforceMax(1)).toBe(2);
      expect(await count('messages')).toBe(1);
      expect(await count('search_rows')).toBe(2);
      await admin().query(
        `INSERT INTO "${store.schema}".search_rows (session_id, seq, text) VALUES ('ghost', 0, 'boo')`,
      );
      const report = await store.repair();
      expect(report).toEqual({ rebuilt: 1, skippedCorrupt: [], indexEntriesFixed: 1 });
      expect(await count('search_rows')).toBe(2);
    } finally {
      await destroyStore(store);
    }
  });
});
