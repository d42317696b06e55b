// trigram.ts: the pg_trgm index over the words rows of search.
import { describe, expect, it } from 'vitest';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the trigram tests did not run');

describe.runIf(available)('trigram › the index', () => {
  it('the trigram index exists when pg_trgm is available', async () => {
    const store = await freshStore();
    try {
      const r = await admin().query(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'search_words_trgm'`,
        [store.schema],
      );
      expect(r.rows[0]?.indexdef).toMatch(/gin \(words .*gin_trgm_ops\)/);
    } finally {
      await destroyStore(store);
    }
  });
});
