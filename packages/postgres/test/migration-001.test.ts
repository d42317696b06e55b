// migrations/001-initial.ts: the tables as created (timestamp precision).
import { describe, expect, it } from 'vitest';
import { admin, borrowedStore, postgresForFile } from './harness.js';

const available = postgresForFile('the migration-001 tests did not run');

describe.runIf(available)('migration 1 › millisecond timestamps', () => {
  it('every timestamp column keeps milliseconds only, so keyset cursors compare what callers see', async () => {
    const { schema, store, dispose } = await borrowedStore();
    try {
      const cols = await admin().query<{ table_name: string; column_name: string; p: number }>(
        `SELECT table_name, column_name, datetime_precision AS p FROM information_schema.columns
         WHERE table_schema = $1 AND data_type = 'timestamp with time zone'
           AND table_name <> 'schema_migrations'`,
        [schema],
      );
      expect(cols.rows.length).toBeGreaterThan(0);
      for (const c of cols.rows) expect(`${c.table_name}.${c.column_name}:${c.p}`).toMatch(/:3$/);
      // Even a microsecond value written behind the store comes back as whole milliseconds,
      // and a keyset page after it starts exactly after it.
      await store.create({ id: 'a' });
      await store.create({ id: 'b' });
      await admin().query(
        `UPDATE "${schema}".sessions SET updated_at = '2026-01-01 00:00:00.123456+00' WHERE id = 'a'`,
      );
      const [first] = await store.list({ limit: 1, oldestFirst: true });
      expect(first!.id).toBe('a');
      expect(first!.updatedAt.toISOString()).toBe('2026-01-01T00:00:00.123Z');
      const next = await store.list({
        oldestFirst: true,
        startAfter: { updatedAt: first!.updatedAt, id: first!.id },
      });
      expect(next.map((x) => x.id)).toEqual(['b']);
    } finally {
      await dispose();
    }
  });
});
