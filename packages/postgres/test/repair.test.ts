// repair.ts (and delete/enforceMax): no derived rows left behind; repair sweeps rows no
// session owns (search never counted them) without reporting them as fixes.
import { describe, expect, it } from 'vitest';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the repair tests did not run');

describe.runIf(available)('repair › derived data stays exact', () => {
  it('delete and enforceMax leave no message or search rows behind; repair sweeps orphans', async () => {
    const store = await freshStore();
    const count = async (table: string) =>
      (await admin().query(`SELECT count(*)::int AS n FROM "${store.schema}".${table}`)).rows[0].n;
    const searchRows = async () =>
      (await count('search_chunks')) +
      (await count('search_words')) +
      (await count('search_pending'));
    try {
      for (let i = 0; i < 4; i++) {
        await store.create({
          id: `d-${i}`,
          title: `t${i}`,
          updatedAt: new Date(Date.UTC(2024, 0, 1 + i)),
          messages: [{ role: 'user', content: `m${i}` }],
        });
      }
      await store.indexPendingSearch();
      // Per session: one chunk, a words row for its messages and one for its title.
      expect(await count('search_chunks')).toBe(4);
      expect(await count('search_words')).toBe(8);
      await store.delete('d-0');
      expect(await count('messages')).toBe(3);
      expect(await searchRows()).toBe(9);
      expect(await store.enforceMax(1)).toBe(2);
      expect(await count('messages')).toBe(1);
      expect(await searchRows()).toBe(3);
      // What a writer racing the indexer can leave: rows of a session that is gone and of
      // a past search epoch. Search never counts them; repair deletes them.
      const s = `"${store.schema}"`;
      await admin().query(
        `INSERT INTO ${s}.search_chunks VALUES ('ghost', 1, 0, 1, 'Aboo'), ('d-3', 0, 0, 1, 'Aboo')`,
      );
      await admin().query(`INSERT INTO ${s}.search_words VALUES ('ghost', 1, 0, ' boo ')`);
      await admin().query(`INSERT INTO ${s}.search_pending VALUES ('ghost', 0, 1, 1, 'Aboo')`);
      expect(await store.list({ query: 'boo' })).toEqual([]);
      const report = await store.repair();
      expect(report).toEqual({ rebuilt: 1, skippedCorrupt: [], indexEntriesFixed: 0 });
      expect(await searchRows()).toBe(3);
    } finally {
      await destroyStore(store);
    }
  });
  it('a NUL stored as U+FFFD by schema versions 4–11 is rewritten as the separator by repair', async () => {
    const store = await freshStore();
    const ids = async (query: string) => (await store.list({ query })).map((x) => x.id);
    try {
      await store.create({ id: 'nul', messages: [{ role: 'user', content: 'nul\u0000here' }] });
      await store.indexPendingSearch();
      expect(await ids('nul\uFFFDhere')).toEqual([]);
      // The row as an earlier release wrote it.
      await admin().query(
        `UPDATE "${store.schema}".search_chunks SET text = replace(text, 'nulAhere', 'nul' || chr(65533) || 'here')`,
      );
      expect(await ids('nul\uFFFDhere')).toEqual(['nul']);
      expect((await store.repair()).indexEntriesFixed).toBe(1);
      expect(await ids('nul\uFFFDhere')).toEqual([]);
      expect(await ids('here')).toEqual(['nul']);
    } finally {
      await destroyStore(store);
    }
  });
});
