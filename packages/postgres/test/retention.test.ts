// retention.ts (sk_enforce_max): the roots a retention pass keeps and the locks it takes.
import { describe, expect, it } from 'vitest';
import { admin, borrowedStore, postgresForFile } from './harness.js';

const available = postgresForFile('the retention tests did not run');

describe.runIf(available)('retention › enforceMax races', () => {
  it('a root that a commit makes the newest while enforceMax waits for its lock is kept', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const blocker = await admin().connect();
    try {
      await store.create({ id: 'a', messages: [] });
      await store.create({ id: 'b', messages: [] });
      await store.commit('b', { append: [{ role: 'user', content: 'newer' }] });
      // A turn on 'a' in flight: its row is locked and it becomes the newest on commit.
      await blocker.query('BEGIN');
      await blocker.query(
        `UPDATE "${schema}".sessions SET updated_at = now() + interval '1 hour', revision = revision + 1 WHERE id = 'a'`,
      );
      const pruning = store.enforceMax(1);
      for (let i = 0; ; i++) {
        const r = await admin().query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [`%"${schema}".sk_enforce_max%`],
        );
        if (r.rowCount) break;
        if (i > 500) throw new Error('enforceMax never waited');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await blocker.query('COMMIT');
      expect(await pruning).toBe(0);
      expect((await store.load('a')).revision).toBe(2);
      // The next pass removes the root that is now the oldest.
      expect(await store.enforceMax(1)).toBe(1);
      expect((await store.list()).map((x) => x.id)).toEqual(['a']);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await dispose();
    }
  });
});

describe.runIf(available)('retention › enforceMax locks only its victims', () => {
  it('a retention pass left open in a transaction does not block commits to the roots it keeps', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const pass = await admin().connect();
    const writer = await admin().connect();
    try {
      await store.create({ id: 'old', messages: [] });
      await store.create({ id: 'kept', messages: [] });
      await store.commit('kept', { append: [{ role: 'user', content: 'newer' }] });
      await pass.query('BEGIN');
      const r = await pass.query(`SELECT "${schema}".sk_enforce_max(1) AS n`);
      expect(r.rows[0].n).toBe(1);
      // The pass still holds its locks: an update of the kept root must not wait for them.
      await writer.query(`SET lock_timeout = '2s'`);
      const u = await writer
        .query(`UPDATE "${schema}".sessions SET title = 'touched' WHERE id = 'kept'`)
        .catch((e: unknown) => e);
      expect(u instanceof Error ? (u as { code?: string }).code : 'ok').toBe('ok');
      await pass.query('COMMIT');
      expect((await store.list()).map((x) => [x.id, x.title])).toEqual([['kept', 'touched']]);
    } finally {
      await pass.query('ROLLBACK').catch(() => {});
      pass.release();
      await writer.query('RESET lock_timeout').catch(() => {});
      writer.release();
      await dispose();
    }
  });
});
