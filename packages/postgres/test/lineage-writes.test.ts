// lineage-writes.ts: delete with promotion and merge under concurrency (lock order, races).
import { isSessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import {
  admin,
  borrowedStore,
  destroyStore,
  freshStore,
  newPool,
  postgresForFile,
} from './harness.js';

const available = postgresForFile('the lineage-writes tests did not run');

describe.runIf(available)('lineage-writes › lock ordering', () => {
  it('a merge into a parent that is being deleted never deadlocks with the promotion', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const blocker = await admin().connect();
    try {
      await store.create({ id: 'p', messages: [{ role: 'user', content: 'a' }] });
      const child = await store.branch('p', 1);
      await store.commit(child.id, { append: [{ role: 'assistant', content: 'b' }] });
      // Hold a share lock on the child: the delete of the parent locks the parent and then
      // waits to re-parent the child.
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${schema}".sessions WHERE id = $1 FOR SHARE`, [child.id]);
      const waiting = async (pattern: string) => {
        for (let i = 0; i < 500; i++) {
          const r = await admin().query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
            [pattern],
          );
          if (r.rowCount) return;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        throw new Error(`no backend waiting on ${pattern}`);
      };
      const deleting = store.delete('p').then(
        () => 'deleted',
        (e: unknown) => e,
      );
      await waiting('%WHERE parent_id = $1 AND id <> $1 ORDER BY id FOR UPDATE%');
      const merging = store.merge(child.id).then(
        (s) => s.id,
        (e: unknown) => e,
      );
      // The merge is now waiting for the parent (held by the delete).
      await waiting(`%"${schema}".sessions AS x WHERE x.id = $1 FOR UPDATE%`);
      await blocker.query('COMMIT');
      const [d, m] = await Promise.all([deleting, merging]);
      expect(d).toBe('deleted');
      // The parent is gone and the child promoted to a root: nothing to merge into.
      expect(isSessionKitError(m, 'invalid_argument')).toBe(true);
      expect((await store.load(child.id)).parentId).toBeUndefined();
      expect(store.stats.txRetries).toBe(0);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await dispose();
    }
  });
});

describe.runIf(available)('lineage-writes › delete promotion races', () => {
  it('deleting a session and its parent at once never leaves a grandchild pointing at a deleted session', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const blocker = await admin().connect();
    try {
      await store.create({ id: 'p', messages: [] });
      await store.create({ id: 'c', parentId: 'p', messages: [] });
      await store.create({ id: 'g', parentId: 'c', messages: [] });
      // Hold the grandchild so delete('c') stops just before re-parenting it.
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${schema}".sessions WHERE id = 'g' FOR SHARE`);
      const waiters = async (n: number) => {
        for (let i = 0; i < 500; i++) {
          // delete('c') waits to lock the grandchild; delete('p') waits in sk_delete_lock
          // for the parent lock delete('c') holds.
          const r = await admin().query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'
             AND (query LIKE $1 OR query LIKE $2)`,
            [
              `%"${schema}".sk_delete_lock%`,
              '%WHERE parent_id = $1 AND id <> $1 ORDER BY id FOR UPDATE%',
            ],
          );
          if ((r.rowCount ?? 0) >= n) return;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        throw new Error(`fewer than ${n} deletes waiting`);
      };
      const deleteChild = store.delete('c');
      await waiters(1);
      const deleteParent = store.delete('p');
      await waiters(2);
      await blocker.query('COMMIT');
      await Promise.all([deleteChild, deleteParent]);
      const g = await store.load('g');
      expect(g.parentId).toBeUndefined();
      const rows = await admin().query(
        `SELECT id FROM "${schema}".sessions AS s WHERE parent_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM "${schema}".sessions AS p WHERE p.id = s.parent_id)`,
      );
      expect(rows.rows).toEqual([]);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await dispose();
    }
  });
});

describe.runIf(available)('lineage-writes › trees under concurrency', () => {
  it('a branch racing the delete of its parent is never left pointing at a deleted session', async () => {
    const store = await freshStore();
    const pool = newPool(8);
    const peer = new PostgresStore({ pool, schema: store.schema });
    try {
      for (let round = 0; round < 15; round++) {
        const g = await store.create({ id: `g-${round}` });
        const p = await store.create({
          id: `p-${round}`,
          parentId: g.id,
          messages: [{ role: 'user', content: 'x' }],
        });
        const results = await Promise.allSettled([
          peer.branch(p.id, 1),
          store.delete(p.id),
          peer.branch(p.id, 0),
        ]);
        expect(results[1]!.status).toBe('fulfilled');
        for (const r of [results[0]!, results[2]!]) {
          if (r.status === 'rejected') {
            expect(isSessionKitError(r.reason, 'not_found')).toBe(true);
            continue;
          }
          // Created before the delete: promoted to the grandparent with its siblings.
          const child = await store.load(r.value.id);
          expect(child.parentId).toBe(g.id);
        }
        const dangling = await admin().query(
          `SELECT c.id FROM "${store.schema}".sessions AS c
           WHERE c.parent_id IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM "${store.schema}".sessions AS p WHERE p.id = c.parent_id)`,
        );
        expect(dangling.rows).toEqual([]);
      }
    } finally {
      await peer.close();
      await pool.end();
      await destroyStore(store);
    }
  });
});
