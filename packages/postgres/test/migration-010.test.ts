// Schema version 10 applied to a schema created and written by version 9 (the previous
// release): the operation ids version 9 recorded still replay, the table keeps one index
// and no foreign key, ids past a session's last 1,000 are forgotten in batches, and every
// delete of a session deletes its ids.
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, PostgresStore } from '../src/index.js';
import { FORGET_OPERATIONS_EVERY } from '../src/migrations/010-operations-one-index.js';
import { appendStatementSql, appendValues } from '../src/statements/append.js';
import { COMMIT_PARAMS, type CommitArgs, callValues, namedCall } from '../src/statements/commit.js';
import {
  admin,
  destroyStore,
  dropSchema,
  freshSchema,
  freshStore,
  newPool,
  postgresForFile,
} from './harness.js';
import { schemaAtVersion } from './old-schema.js';

const available = postgresForFile('the PostgreSQL migration 10 test did not run');

const one = async (sql: string) => (await admin().query(sql)).rows[0];

/** A version 9 schema whose session "old" took 1,050 named commits through version 9's sk_commit. */
async function version9Store(s: string): Promise<void> {
  const c = await admin().connect();
  try {
    await schemaAtVersion(c, s, 9);
    await c.query(
      `INSERT INTO ${s}.sessions (id, created_at, updated_at) VALUES ('old', now(), now())`,
    );
    const call = namedCall(s, 'sk_commit', COMMIT_PARAMS);
    for (let i = 0; i < 1050; i++) {
      const args: CommitArgs = {
        id: 'old',
        now: new Date(),
        replace: false,
        rewrite: false,
        bodies: [],
        search: { seqs: [], nexts: [], texts: [] },
        metaReplace: false,
        stateSet: false,
        archivedSet: false,
        modeSet: false,
        incTurns: 1,
        wantHeader: false,
        operationId: `op-${i}`,
      };
      const r = await c.query(call, callValues(COMMIT_PARAMS, args));
      expect(r.rows[0].code).toBe('ok');
    }
  } finally {
    c.release();
  }
}

const idsOf = async (s: string, id: string) =>
  Number((await one(`SELECT count(*) AS n FROM ${s}.operations WHERE session_id = '${id}'`)).n);

describe.runIf(available)('postgres › migration 10', () => {
  it('upgrades a version 9 store: its ids replay, one index, ids forgotten in batches', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    await version9Store(s);
    // Version 9 forgot one id per commit: exactly the last 1,000.
    expect(await idsOf(s, 'old')).toBe(1000);
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      expect((await one(`SELECT max(version) AS n FROM ${s}.schema_migrations`)).n).toBe(
        LATEST_VERSION,
      );
      const indexes = await admin().query(
        `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'operations'`,
        [schema],
      );
      expect(indexes.rows.map((r) => r.indexname)).toEqual(['operations_pkey']);
      const keys = await one(
        `SELECT count(*) AS n FROM pg_constraint WHERE conrelid = '${s}.operations'::regclass AND contype = 'f'`,
      );
      expect(Number(keys.n)).toBe(0);
      // The oldest and the newest id version 9 remembered answer with their first result
      // (commit i of op-i made revision i + 2) and write nothing.
      for (const i of [50, 1049]) {
        const again = await store.commit('old', {
          operationId: `op-${i}`,
          increment: { turnCount: 1 },
        });
        expect(again.revision).toBe(i + 2);
      }
      expect((await store.load('old')).turnCount).toBe(1050);
      // Named commits 1,051 … 1,149: nothing forgotten until the 1,100th, which forgets
      // every id older than its last 1,000; none again until the 1,200th.
      for (let i = 1050; i < 1150; i++) {
        await store.commit('old', { operationId: `op-${i}`, increment: { turnCount: 1 } });
        const held = await idsOf(s, 'old');
        const n = i + 1;
        expect(held).toBe(n < 1100 ? 1000 + (n - 1050) : 1000 + (n - 1100));
        expect(held).toBeLessThan(1000 + FORGET_OPERATIONS_EVERY);
      }
      // Still remembered: the last 1,000 (and the ones since the last forget).
      for (const i of [100, 1149]) {
        const again = await store.commit('old', {
          operationId: `op-${i}`,
          increment: { turnCount: 1 },
        });
        expect(again.revision).toBe(i + 2);
      }
      expect((await store.load('old')).turnCount).toBe(1150);
      // Forgotten by the 1,100th: op-99 is a new write.
      const fresh = await store.commit('old', {
        operationId: 'op-99',
        increment: { turnCount: 1 },
      });
      expect(fresh.revision).toBe(1152);
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });

  it('deletes a session’s ids with it: delete, enforceMax, and repair for rows left by hand', async () => {
    const store = await freshStore();
    const s = `"${store.schema}"`;
    try {
      for (const id of ['a', 'b', 'c']) {
        await store.create({ id });
        await store.commit(id, { operationId: `${id}-1`, append: [{ role: 'user', content: id }] });
      }
      await store.delete('a');
      expect(await idsOf(s, 'a')).toBe(0);
      expect(await store.enforceMax(1)).toBe(1);
      expect(await idsOf(s, 'b')).toBe(0);
      expect(await idsOf(s, 'c')).toBe(1);
      // A recreated id remembers nothing of its first life.
      await store.create({ id: 'b' });
      const again = await store.commit('b', {
        operationId: 'b-1',
        append: [{ role: 'user', content: 'new' }],
      });
      expect(again.revision).toBe(2);
      expect((await store.loadMessages('b')).length).toBe(1);
      // A session deleted by hand leaves its ids until repair.
      await admin().query(`DELETE FROM ${s}.sessions WHERE id = 'c'`);
      expect(await idsOf(s, 'c')).toBe(1);
      await store.repair();
      expect(await idsOf(s, 'c')).toBe(0);
      expect(await idsOf(s, 'b')).toBe(1);
    } finally {
      await destroyStore(store);
    }
  });

  it('a named turn reads no operation row before it writes; a replay fails on the key and answers the first result', async () => {
    const store = await freshStore();
    const s = `"${store.schema}"`;
    try {
      await store.create({ id: 'a' });
      const first = await store.commit('a', {
        operationId: 'op-1',
        append: [{ role: 'user', content: 'once' }],
      });
      // The statement's plan, run: the operations table is only inserted into (the forget
      // runs on every 100th named commit only, and this is the 2nd).
      const c = await admin().connect();
      try {
        await c.query('BEGIN');
        const values = appendValues({
          id: 'a',
          now: new Date(),
          bodies: ['{"role":"user","content":"x"}'],
          search: { seqs: [0], nexts: [1], texts: ['Ax'] },
          operationId: 'op-2',
        });
        const literal = (v: unknown) =>
          v === null || v === undefined
            ? 'NULL'
            : v instanceof Date
              ? `'${v.toISOString()}'`
              : c.escapeLiteral(String(v));
        const text = appendStatementSql(s, 1, 1, true).replace(/\$(\d+)(?!\d)/g, (_, n: string) =>
          literal(values[Number(n) - 1]),
        );
        const plan = (await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`)).rows[0][
          'QUERY PLAN'
        ];
        const reads: string[] = [];
        const walk = (node: Record<string, unknown>) => {
          if (
            node['Relation Name'] === 'operations' &&
            node['Node Type'] !== 'ModifyTable' &&
            Number(node['Actual Loops']) > 0
          ) {
            reads.push(String(node['Node Type']));
          }
          for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? [])
            walk(child);
        };
        walk(plan[0].Plan);
        expect(reads).toEqual([]);
      } finally {
        await c.query('ROLLBACK');
        c.release();
      }
      // The replay: the turn's INSERT of the id fails on the key, nothing is written, and the
      // first result comes back, with or without expectations that still hold.
      const again = await store.commit('a', {
        operationId: 'op-1',
        append: [{ role: 'user', content: 'twice' }],
      });
      expect(again).toEqual(first);
      const held = await store.commit('a', {
        operationId: 'op-1',
        expectedRevision: first.revision,
        append: [{ role: 'user', content: 'thrice' }],
      });
      expect(held).toEqual(first);
      expect(
        (await store.loadMessages('a')).map((m) => (m as { content: string }).content),
      ).toEqual(['once']);
      expect((await store.load('a')).revision).toBe(first.revision);
    } finally {
      await destroyStore(store);
    }
  });
});
