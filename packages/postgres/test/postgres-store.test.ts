// postgres-store.ts: the constructor checks its options and schema name before any I/O.
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { POSTGRES_URL } from './env.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';

const available = postgresForFile('the postgres-store tests did not run');

describe.runIf(available)('PostgresStore › constructor options', () => {
  it('rejects bad schema names before any I/O and quotes good ones', async () => {
    const pool = newPool(1);
    try {
      const pg = await import('pg');
      const client = new pg.default.Client({ connectionString: POSTGRES_URL });
      expect(() => new PostgresStore({ pool: client as never })).toThrow(/not a Client/);
      expect(() => new PostgresStore({ pool, extra: 1 } as never)).toThrow(/unknown option/);
      for (const bad of [
        '',
        'a-b',
        'x;drop',
        '1abc',
        'pg_catalog',
        'a"b',
        'a'.repeat(64),
        'sch ema',
      ]) {
        expect(() => new PostgresStore({ pool, schema: bad })).toThrow(/schema must be/);
      }
      // Mixed case is kept as written (quoted identifiers).
      const schema = `Sk_Mixed_${freshSchema()}`.slice(0, 63);
      const store = await PostgresStore.fromPool(pool, { schema });
      await store.create({ id: 'x' });
      const r = await admin().query(
        'SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1',
        [schema],
      );
      expect(r.rows[0].n).toBe(1);
      await store.close();
      await dropSchema(schema);
    } finally {
      await pool.end();
    }
  });
});
