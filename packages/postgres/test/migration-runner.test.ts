// migrations/runner.ts: many processes opening one empty schema at once.
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { LATEST_VERSION, MIGRATIONS } from '../src/migrations/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';

const available = postgresForFile('the migration-runner tests did not run');

describe.runIf(available)('migrations/runner › concurrent first opens', () => {
  it('8 stores with their own pools opening an empty schema at once all succeed, migrating once', async () => {
    const schema = freshSchema();
    const pools = Array.from({ length: 8 }, () => newPool(2));
    try {
      const stores = await Promise.all(
        pools.map((pool) => PostgresStore.fromPool(pool, { schema })),
      );
      const r = await admin().query(
        `SELECT version, count(*)::int AS n FROM "${schema}".schema_migrations GROUP BY version ORDER BY version`,
      );
      expect(r.rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, n: 1 })));
      expect(Math.max(...r.rows.map((x: { version: number }) => x.version))).toBe(LATEST_VERSION);
      // Every store works on the shared schema.
      await stores[0]!.create({ id: 'shared-1', title: 'one' });
      for (const s of stores) expect((await s.load('shared-1')).title).toBe('one');
      for (const s of stores) await s.close();
    } finally {
      for (const p of pools) await p.end();
      await dropSchema(schema);
    }
  });
});

describe.runIf(available)('migrations/runner › a schema from a newer release', () => {
  it('is refused with corrupt naming the unknown migration, and nothing is changed', async () => {
    const schema = freshSchema();
    const pool = newPool(2);
    try {
      const first = await PostgresStore.fromPool(pool, { schema });
      await first.create({ id: 'kept', title: 'from this release' });
      await first.close();
      const next = LATEST_VERSION + 1;
      await admin().query(
        `INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, 'from-the-future')`,
        [next],
      );
      const err = await PostgresStore.fromPool(pool, { schema }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'corrupt' });
      expect(String((err as Error).message)).toContain(`migration ${next}`);
      expect(String((err as Error).message)).toContain('upgrade @sessionkit/postgres');
      const rows = await admin().query(`SELECT id FROM "${schema}".sessions`);
      expect(rows.rows).toEqual([{ id: 'kept' }]);
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
