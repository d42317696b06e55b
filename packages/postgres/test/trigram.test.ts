// trigram.ts: the pg_trgm index over search rows.
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from './env.js';
import { admin, destroyStore, endAdmin, freshStore } from './harness.js';

const available = postgresAvailable('the trigram tests did not run');

afterAll(async () => {
  if (available) await endAdmin();
});

describe.runIf(available)('trigram › the index', () => {
  it('the trigram index exists when pg_trgm is available', async () => {
    const store = await freshStore();
    try {
      const r = await admin().query(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'search_rows_trgm'`,
        [store.schema],
      );
      expect(r.rows[0]?.indexdef).toMatch(/gin \(text .*gin_trgm_ops\)/);
    } finally {
      await destroyStore(store);
    }
  });
});
