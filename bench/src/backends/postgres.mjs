// The PostgreSQL store beside one raw statement per turn that checks the revision and
// inserts the two message rows (what a hand-written table would do), on the same server.
import { PostgresStore } from '@sessionkit/postgres';
import pg from 'pg';
import { testSetting } from '../env.mjs';
import { scaleRun } from './postgres-scale.mjs';

let pool;
function sharedPool() {
  if (!pool) {
    pool = new pg.Pool({ connectionString: testSetting('SESSIONKIT_TEST_POSTGRES_URL'), max: 4 });
    pool.on('error', () => {});
  }
  return pool;
}

let schemas = 0;
const freshSchema = (what) => `sk_bench_${what}_${process.pid}_${++schemas}`;

export async function dropSchema(schema) {
  await sharedPool().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Bytes of every table and index in `schema`. */
export async function schemaBytes(schema) {
  const r = await sharedPool().query(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
    [schema],
  );
  return Number(r.rows[0].bytes);
}

export async function openStoreOnFreshSchema(what) {
  const schema = freshSchema(what);
  const store = await PostgresStore.fromPool(sharedPool(), { schema });
  return { store, schema };
}

export default {
  name: 'postgres',
  ceiling: 'one INSERT … WHERE revision = $n statement',
  async available() {
    try {
      await sharedPool().query('SELECT 1');
      return true;
    } catch (e) {
      return `not reachable (${e.message})`;
    }
  },
  async open() {
    const { store, schema } = await openStoreOnFreshSchema('store');
    return {
      store,
      storedBytes: async () => {
        await sharedPool()
          .query('CHECKPOINT')
          .catch(() => {});
        return schemaBytes(schema);
      },
      // WAL bytes the server wrote (server-wide: run the bench on an otherwise idle server).
      writtenBytes: async () => {
        const r = await sharedPool().query(
          "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS bytes",
        );
        return Number(r.rows[0].bytes);
      },
      async close() {
        await store.close();
        await dropSchema(schema);
      },
    };
  },
  async raw(history) {
    const schema = freshSchema('raw');
    const db = sharedPool();
    await db.query(`CREATE SCHEMA "${schema}"`);
    await db.query(
      `CREATE TABLE "${schema}".sessions (id text PRIMARY KEY, revision bigint NOT NULL)`,
    );
    await db.query(
      `CREATE TABLE "${schema}".messages (session_id text, seq int, body text, PRIMARY KEY (session_id, seq))`,
    );
    await db.query(`INSERT INTO "${schema}".sessions VALUES ('s', 1)`);
    await db.query(
      `INSERT INTO "${schema}".messages SELECT 's', g, repeat('x', 1000) FROM generate_series(0, $1 - 1) g`,
      [history],
    );
    let revision = 1;
    let seq = history;
    const sql = `WITH up AS (
        UPDATE "${schema}".sessions SET revision = revision + 1 WHERE id = 's' AND revision = $1
        RETURNING revision)
      INSERT INTO "${schema}".messages (session_id, seq, body)
      SELECT 's', t.seq, t.body FROM up, unnest($2::int[], $3::text[]) AS t(seq, body)`;
    return {
      async turn(messages) {
        const bodies = messages.map((m) => JSON.stringify(m));
        const seqs = bodies.map((_, i) => seq + i);
        const r = await db.query({
          name: `raw-${schema}`,
          text: sql,
          values: [revision, seqs, bodies],
        });
        if (r.rowCount !== messages.length) throw new Error('raw turn lost its revision');
        revision += 1;
        seq += messages.length;
      },
      close: () => dropSchema(schema),
    };
  },
  scale: (options) => scaleRun(sharedPool(), options),
  async end() {
    await pool?.end();
    pool = undefined;
  },
};
