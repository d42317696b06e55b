// Store sizes (issue 30): `list` of a page and `enforceMax` removing the 100 oldest roots at
// 10,000 and at 1,000,000 sessions, each beside the raw indexed query of the same page, in
// one schema grown in place. Sessions are made with generate_series (secondary indexes
// dropped and rebuilt around the load, then ANALYZE), so a million takes seconds, not the
// store's own writes. Returns the figures; prints them.
import { performance } from 'node:perf_hooks';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timeIt(n, fn) {
  for (let i = 0; i < 3; i++) await fn();
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Adds sessions `from` … `to` (ids `s-0000001` …, one a minute older than the next). */
async function grow(admin, q, from, to) {
  const indexes = (
    await admin.query(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
       FROM pg_index i WHERE i.indrelid = '${q}.sessions'::regclass AND NOT i.indisprimary`,
    )
  ).rows;
  for (const { name } of indexes) await admin.query(`DROP INDEX ${name}`);
  for (let start = from; start <= to; start += 250_000) {
    const end = Math.min(to, start + 249_999);
    await admin.query(
      `INSERT INTO ${q}.sessions (id, title, folder, created_at, updated_at, message_count)
       SELECT 's-' || lpad(g::text, 7, '0'), 'session ' || g, '/scale', now(),
              timestamptz '2020-01-01' + g * interval '1 second', 0
       FROM generate_series($1::int, $2::int) AS g`,
      [start, end],
    );
  }
  for (const { def } of indexes) await admin.query(def);
  await admin.query(`VACUUM ANALYZE ${q}.sessions`);
}

/**
 * `list({limit: 20})` and the raw indexed query of the same page (the header columns only,
 * by the same index), and `enforceMax(roots - 100)`, at each size (ascending), medians.
 */
export async function scaleBench({ admin, open, sizes = [10_000, 1_000_000] }) {
  const schema = `sk_bench_scale_${process.pid}`;
  const q = `"${schema}"`;
  const store = await open(schema);
  const raw = `SELECT id, title, folder, parent_id, created_at, updated_at, model, provider,
    token_count, cost_usd, turn_count, metadata, status, branched_at_turn, revision,
    archived_at, mode, state, message_count
    FROM ${q}.sessions WHERE archived_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT 20`;
  const rows = [];
  let have = 0;
  try {
    for (const size of sizes) {
      const t0 = performance.now();
      await grow(admin, q, have + 1, size);
      have = size;
      const loadSeconds = (performance.now() - t0) / 1000;
      const listMs = await timeIt(31, () => store.list({ limit: 20 }));
      const rawMs = await timeIt(31, () => admin.query(raw));
      const prunes = [];
      for (let i = 0; i < 3; i++) {
        const roots = Number(
          (await admin.query(`SELECT count(*) AS n FROM ${q}.sessions WHERE parent_id IS NULL`))
            .rows[0].n,
        );
        const t = performance.now();
        const n = await store.enforceMax(roots - 100);
        prunes.push(performance.now() - t);
        if (n !== 100) throw new Error(`enforceMax removed ${n}, not 100`);
      }
      rows.push({ size, loadSeconds, listMs, rawMs, enforceMaxMs: median(prunes) });
    }
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA ${q} CASCADE`);
  }
  const fmt = (x) => x.toFixed(2).padStart(7);
  console.log('\nstore size (sessions made with generate_series, then VACUUM ANALYZE):');
  console.log(
    'sessions      load s   list 20 ms   raw indexed ms   list/raw   enforceMax(-100) ms',
  );
  for (const r of rows) {
    console.log(
      `${r.size.toLocaleString('en-US').padStart(9)}  ${r.loadSeconds.toFixed(1).padStart(7)}  ${fmt(r.listMs)}      ${fmt(r.rawMs)}        ${(r.listMs / r.rawMs).toFixed(2).padStart(5)}x   ${fmt(r.enforceMaxMs)}`,
    );
  }
  const [small, big] = rows;
  if (small && big) {
    console.log(
      `enforceMax at ${big.size.toLocaleString('en-US')} / at ${small.size.toLocaleString('en-US')}: ${(big.enforceMaxMs / small.enforceMaxMs).toFixed(2)}x (target <= 2x); list/raw ${(small.listMs / small.rawMs).toFixed(2)}x and ${(big.listMs / big.rawMs).toFixed(2)}x (target <= 2x)`,
    );
  }
  return rows;
}
