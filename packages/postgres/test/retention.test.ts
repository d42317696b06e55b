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

describe.runIf(available)('retention › the root count', () => {
  it('stays the number of roots through every kind of write, and enforceMax keeps the newest', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const s = `"${schema}"`;
    const counted = async () =>
      Number((await admin().query(`SELECT sum(n) AS n FROM ${s}.root_count`)).rows[0].n);
    const actual = async () =>
      Number(
        (await admin().query(`SELECT count(*) AS n FROM ${s}.sessions WHERE parent_id IS NULL`))
          .rows[0].n,
      );
    const agree = async () => expect(await counted()).toBe(await actual());
    try {
      for (let i = 0; i < 6; i++) {
        await store.create({ id: `r${i}`, updatedAt: new Date(Date.UTC(2024, 0, 1 + i)) });
      }
      await agree();
      const kid = await store.branch('r0', 0);
      const clone = await store.clone('r1');
      // An import restoring a tree: a child whose parent comes later.
      await store.create({ id: 'orphan', parentId: 'later' });
      await agree();
      await store.commit(kid.id, { append: [{ role: 'user', content: 'turn' }] });
      await store.merge(kid.id);
      await agree();
      // Delete with promotion: the branch becomes a root.
      await store.delete('r0');
      expect((await store.load(kid.id)).parentId).toBeUndefined();
      await agree();
      const grandkid = await store.branch(kid.id, 1);
      await store.delete(grandkid.id);
      await agree();
      // enforceMax keeps the newest three roots (list order) and deletes the other roots;
      // their children become roots; sub-sessions never count.
      await store.branch('r2', 0);
      const rootsBefore = (await store.list({ includeArchived: true, limit: 1000 })).filter(
        (x) => x.parentId === undefined,
      );
      expect(await store.enforceMax(3)).toBe(rootsBefore.length - 3);
      await agree();
      const rootsAfter = new Set(
        (await admin().query(`SELECT id FROM ${s}.sessions WHERE parent_id IS NULL`)).rows.map(
          (r: { id: string }) => r.id,
        ),
      );
      expect(rootsBefore.filter((x) => rootsAfter.has(x.id)).map((x) => x.id)).toEqual(
        rootsBefore.slice(0, 3).map((x) => x.id),
      );
      expect(rootsAfter.has(clone.id)).toBe(true);
      // Each pass folds the rows into one (here a pass that deletes nothing).
      expect(await store.enforceMax(1000)).toBe(0);
      expect(
        Number((await admin().query(`SELECT count(*) AS n FROM ${s}.root_count`)).rows[0].n),
      ).toBe(1);
    } finally {
      await dispose();
    }
  });
});
