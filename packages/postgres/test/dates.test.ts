// dates.ts: timestamps read back exactly whatever the connection TimeZone.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { POSTGRES_URL } from './env.js';
import { dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';

const available = postgresForFile('the dates tests did not run');

describe.runIf(available)('dates › session TimeZone', () => {
  it('load returns exact dates whatever the connection TimeZone, even offsets with seconds', async () => {
    const schema = freshSchema();
    const store = await PostgresStore.fromPool(newPool(), { schema });
    await store.create({ id: 'tz', messages: [] });
    await store.close();
    for (const zone of ['Europe/Amsterdam', 'Asia/Kolkata', 'America/St_Johns', 'UTC']) {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, options: `-c TimeZone=${zone}` });
      const zoned = await PostgresStore.fromPool(pool, { schema });
      try {
        // 1935 Amsterdam was UTC+00:19:32; 1900 Kolkata UTC+05:53:28.
        for (const iso of [
          '1935-06-01T12:34:56.789Z',
          '1900-01-01T00:00:00.001Z',
          '2024-02-29T23:59:59.999Z',
        ]) {
          const id = `tz-${zone.replace(/\W/g, '-')}-${iso.slice(0, 4)}`;
          const at = new Date(iso);
          await zoned.create({ id, messages: [], createdAt: at, updatedAt: at });
          const loaded = await zoned.load(id);
          expect(loaded.createdAt.toISOString(), `${zone} ${iso}`).toBe(iso);
          expect(loaded.updatedAt.toISOString(), `${zone} ${iso}`).toBe(iso);
        }
      } finally {
        await zoned.close();
        await pool.end();
      }
    }
    await dropSchema(schema);
  });
});
