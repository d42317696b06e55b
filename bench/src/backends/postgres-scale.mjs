// PostgreSQL at scale: list 20, commit and enforceMax on a schema bulk-loaded to 10,000
// and then to 1,000,000 sessions. The bulk load copies one template session, made through
// the store, into every table keyed by session (whatever the schema version's tables
// are), with ids and timestamps of its own, so the store sees the rows it would write.
import { newSession } from '@sessionkit/core';
import { median, medianMs, turnMessages } from '../workload.mjs';
import { dropSchema, openStoreOnFreshSchema } from './postgres.mjs';

/** Tables whose primary key starts with the session's id, and that id's column. */
async function sessionTables(db, schema) {
  const r = await db.query(
    `SELECT c.relname AS table, a.attname AS key
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
      WHERE i.indisprimary AND n.nspname = $1 AND a.attname IN ('id', 'session_id')`,
    [schema],
  );
  const tables = [];
  for (const { table, key } of r.rows) {
    if (key === 'id' && table !== 'sessions') continue;
    const cols = await db.query(
      `SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0
          AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
      [`"${schema}"."${table}"`],
    );
    tables.push({ table, key, columns: cols.rows.map((c) => c.attname) });
  }
  return tables;
}

/**
 * The indexes of `tables` that back no constraint, dropped: rebuilding them once after a
 * bulk load is far cheaper than maintaining them row by row. Returns their definitions.
 */
async function dropSecondaryIndexes(db, schema, tables) {
  const r = await db.query(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = ANY($2)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
    [schema, tables.map((t) => t.table)],
  );
  for (const { name } of r.rows) await db.query(`DROP INDEX ${name}`);
  return r.rows.map((row) => row.def);
}

/** Copies the template into sessions `template-from` … `template-to`, older than it. */
async function bulkCopy(db, schema, tables, template, from, to) {
  const client = await db.connect();
  try {
    await client.query(`SET maintenance_work_mem = '512MB'`);
    await client.query('SET synchronous_commit = off');
    const indexes = await dropSecondaryIndexes(client, schema, tables);
    await copyRows(client, schema, tables, template, from, to);
    for (const def of indexes) await client.query(def);
    for (const { table } of tables) await client.query(`ANALYZE "${schema}"."${table}"`);
  } finally {
    client.release();
  }
}

async function copyRows(db, schema, tables, template, from, to) {
  for (let start = from; start <= to; start += 100_000) {
    const end = Math.min(to, start + 100_000 - 1);
    for (const { table, key, columns } of tables) {
      const select = columns.map((c) => {
        if (c === key) return `t."${c}" || '-' || g`;
        if (table === 'sessions' && (c === 'updated_at' || c === 'created_at'))
          return `t."${c}" - g * interval '1 millisecond'`;
        return `t."${c}"`;
      });
      await db.query(
        `INSERT INTO "${schema}"."${table}" (${columns.map((c) => `"${c}"`).join(', ')})
         SELECT ${select.join(', ')} FROM "${schema}"."${table}" t, generate_series($2::int, $3::int) g
          WHERE t."${key}" = $1`,
        [template, start, end],
      );
    }
  }
}

/** Commits per second, round robin over 50 bulk-loaded sessions. */
async function commitRate(store, template, revisions, turns) {
  const ids = Array.from({ length: 50 }, (_, i) => `${template}-${i + 1}`);
  const started = performance.now();
  for (let n = 0; n < turns; n++) {
    const id = ids[n % ids.length];
    const r = await store.commit(id, {
      expectedRevision: revisions.get(id),
      append: turnMessages(n),
    });
    revisions.set(id, r.revision);
  }
  return (turns * 1000) / (performance.now() - started);
}

/**
 * Figures at each size in `sizes` (ascending): list 20 (median ms), commits per second,
 * and enforceMax deleting the 100 oldest roots (median of 3, ms).
 */
export async function scaleRun(db, { sizes, turns }) {
  const { store, schema } = await openStoreOnFreshSchema('scale');
  try {
    const made = await store.create(newSession({ folder: '/scale', title: 'template' }));
    // Short messages: the figures are about the number of sessions, and 1,000,000 copies
    // of a 2 KB turn would make the load, not the store, the subject.
    const { revision } = await store.commit(made.id, {
      expectedRevision: made.revision,
      append: [
        { role: 'user', content: 'Where are the build logs?' },
        { role: 'assistant', content: 'Under /var/log/ci, one file per run.' },
      ],
    });
    const tables = await sessionTables(db, schema);
    const revisions = new Map(
      Array.from({ length: 50 }, (_, i) => [`${made.id}-${i + 1}`, revision]),
    );
    const rows = [];
    let loaded = 1;
    for (const size of sizes) {
      const started = performance.now();
      await bulkCopy(db, schema, tables, made.id, loaded, size - 1);
      const loadSeconds = (performance.now() - started) / 1000;
      loaded = size;
      const list20Ms = await medianMs(20, () => store.list({ limit: 20 }));
      const commitOps = await commitRate(store, made.id, revisions, turns);
      const prunes = [];
      for (let i = 0; i < 3; i++) {
        const count = Number(
          (await db.query(`SELECT count(*) FROM "${schema}".sessions WHERE parent_id IS NULL`))
            .rows[0].count,
        );
        const t = performance.now();
        await store.enforceMax(count - 100);
        prunes.push(performance.now() - t);
      }
      rows.push({ sessions: size, loadSeconds, list20Ms, commitOps, enforceMaxMs: median(prunes) });
      console.log(
        `  postgres at ${size.toLocaleString('en')} sessions: ${JSON.stringify(rows.at(-1))}`,
      );
    }
    return rows;
  } finally {
    await store.close();
    await dropSchema(schema);
  }
}
