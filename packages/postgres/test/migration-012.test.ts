// Schema version 12 applied to a schema created by version 11 (the previous release): a
// session's `updated_at` can no longer be moved past year 9999 by any write path — the
// one-statement turn, `sk_commit` (patches, replaces) — and such a write fails with
// `invalid_argument`, nothing written. (The check is NOT VALID: the upgrade scans no rows.)
import { isSessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, PostgresStore } from '../src/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { schemaAtVersion } from './old-schema.js';

const available = postgresForFile('the PostgreSQL migration 12 test did not run');

const LAST = new Date('9999-12-31T23:59:59.999Z');

async function version11Schema(s: string): Promise<void> {
  const c = await admin().connect();
  try {
    await schemaAtVersion(c, s, 11);
  } finally {
    c.release();
  }
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return isSessionKitError(e) ? e.code : `raw ${String(e)}`;
  }
}

describe.runIf(available)('postgres › migration 12', () => {
  it('upgrades a version 11 schema: no write moves updated_at past year 9999, and nothing is written', async () => {
    const schema = freshSchema();
    await version11Schema(`"${schema}"`);
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      const version = await admin().query(
        `SELECT max(version) AS n FROM "${schema}".schema_migrations`,
      );
      expect(version.rows[0].n).toBe(LATEST_VERSION);
      await store.create({
        id: 'last',
        updatedAt: LAST,
        messages: [{ role: 'user', content: 'a' }],
      });
      const before = await store.load('last');
      // The one-statement turn, and sk_commit (a patch, a replace).
      expect(await codeOf(store.commit('last', { append: [{ role: 'user', content: 'b' }] }))).toBe(
        'invalid_argument',
      );
      expect(await codeOf(store.commit('last', { patch: { title: 'changed' } }))).toBe(
        'invalid_argument',
      );
      expect(await codeOf(store.commit('last', { replace: [] }))).toBe('invalid_argument');
      expect(await store.load('last')).toEqual(before);
      // The constraint itself, under the adapter's own checks: a statement that tries.
      const direct = await codeOf(
        admin().query(
          `UPDATE "${schema}".sessions SET updated_at = updated_at + interval '1 millisecond' WHERE id = 'last'`,
        ),
      );
      expect(direct).toMatch(/sessions_updated_at_range/);
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
