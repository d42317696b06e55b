// branch-clone.ts: the search rows of a branch hold only what it copied.
import { describe, expect, it } from 'vitest';
import { destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the branch-clone tests did not run');

describe.runIf(available)('branch-clone › derived data stays exact', () => {
  it('a branch inside a committed turn does not find the text after its branch point', async () => {
    const store = await freshStore();
    try {
      const s = await store.create({ id: 'src', folder: 'f' });
      await store.commit(s.id, {
        append: [
          { role: 'user', content: 'alpha question' },
          { role: 'assistant', content: 'omega answer' },
        ],
      });
      const b = await store.branch(s.id, 1);
      const hits = async (q: string) =>
        (await store.list({ folder: 'f', query: q })).map((x) => x.id).sort();
      expect(await hits('omega')).toEqual(['src']);
      expect(await hits('alpha')).toEqual([b.id, 'src'].sort());
      // One turn is one search row, yet a query across its two messages matches nothing.
      expect(await hits('question\nomega')).toEqual([]);
      expect(await hits('questionomega')).toEqual([]);
      const c = await store.clone(s.id);
      expect(await hits('omega')).toEqual([c.id, 'src'].sort());
      // A healthy store needs no repair.
      expect((await store.repair()).indexEntriesFixed).toBe(0);
    } finally {
      await destroyStore(store);
    }
  });
});
