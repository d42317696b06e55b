// Search designs compared on the same data, at the SQL level (no adapter code): what a
// turn costs with each design's search write, what 200 turns take on disk, and how fast
// a 3- and a 12-character query runs over 10,000 sessions × 100 messages. Not a test:
// prints the table the README records. Needs PostgreSQL with pg_trgm.
// Usage: node bench/search-designs.mjs   [DESIGNS_SECONDS=3] [DESIGNS_GIST=1: GiST search too]
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { prng, prose } from './text.mjs';

const SECONDS = Number(process.env.DESIGNS_SECONDS ?? 2);
const ROUNDS = Number(process.env.DESIGNS_ROUNDS ?? 3);
const url =
  process.env.SESSIONKIT_TEST_POSTGRES_URL ||
  /^SESSIONKIT_TEST_POSTGRES_URL=(.*)$/m.exec(
    readFileSync(new URL('../../../.env.example', import.meta.url), 'utf8'),
  )?.[1] ||
  'postgres://postgres@127.0.0.1:5432/test';
const pool = new pg.Pool({ connectionString: url, max: 12 });
pool.on('error', () => {});
const S = `sk_designs_${process.pid}`;
await pool.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');

/**
 * The write side of each design: the index on the search rows (null: none) and whether
 * the turn writes its search row to an unindexed pending table that a mover drains
 * into the indexed one in batches (off the turn's transaction).
 */
const WRITE_DESIGNS = [
  { name: 'raw rows (no search)', search: false },
  { name: 'GIN gin_trgm_ops, in the turn (v4)', index: 'gin (text gin_trgm_ops)' },
  {
    name: 'GiST gist_trgm_ops(siglen=64), in the turn',
    index: 'gist (text gist_trgm_ops(siglen=64))',
  },
  {
    name: 'GiST gist_trgm_ops(siglen=256), in the turn',
    index: 'gist (text gist_trgm_ops(siglen=256))',
  },
  {
    name: 'GIN gin_pending_list_limit=64kB, in the turn',
    index: 'gin (text gin_trgm_ops) WITH (gin_pending_list_limit = 64)',
  },
  { name: 'GIN, moved in batches off the turn', index: 'gin (text gin_trgm_ops)', deferred: true },
  {
    name: 'GIN, moved in batches, pending list flushed',
    index: 'gin (text gin_trgm_ops)',
    deferred: true,
    flush: true,
  },
  {
    name: 'GIN gin_pending_list_limit=64kB, moved in batches (v5)',
    index: 'gin (text gin_trgm_ops) WITH (gin_pending_list_limit = 64)',
    deferred: true,
  },
  {
    name: 'GIN fastupdate=off, moved in batches',
    index: 'gin (text gin_trgm_ops) WITH (fastupdate = off)',
    deferred: true,
  },
  { name: 'pending text only, no index (scan)', deferred: true, noMove: true },
];

const turns = (() => {
  const next = prng(7);
  return Array.from({ length: 3000 }, () => [prose(next, 1000), prose(next, 1000)]);
})();
const body = (role, t) => JSON.stringify({ role, content: t });

async function schemaFor(d, i) {
  const s = `${S}_${i}`;
  await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE; CREATE SCHEMA ${s};
CREATE TABLE ${s}.sessions (id text PRIMARY KEY, revision bigint NOT NULL DEFAULT 1,
  message_count integer NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE ${s}.messages (session_id text COLLATE "C", seq integer, body text NOT NULL, PRIMARY KEY (session_id, seq));
CREATE TABLE ${s}.search_rows (session_id text COLLATE "C", seq integer, text text NOT NULL, PRIMARY KEY (session_id, seq));
CREATE TABLE ${s}.search_pending () INHERITS (${s}.search_rows);
ALTER TABLE ${s}.search_pending ADD PRIMARY KEY (session_id, seq);
${d.index ? `CREATE INDEX ON ${s}.search_rows USING ${d.index};` : ''}
INSERT INTO ${s}.sessions (id) VALUES ('storage'), ('rate');`);
  return s;
}

/** One turn statement: revision check, two message rows, and the design's search row. */
function turnStatement(s, d) {
  const target = d.deferred ? 'search_pending' : 'search_rows';
  const search =
    d.search === false
      ? ''
      : `, x AS (INSERT INTO ${s}.${target} (session_id, seq, text)
  SELECT s.id, s.message_count - 2, $5::text FROM s)`;
  return `WITH s AS (UPDATE ${s}.sessions SET revision = revision + 1, message_count = message_count + 2,
  updated_at = greatest(now(), updated_at + interval '1 millisecond') WHERE id = $1 AND revision = $2
  RETURNING id, message_count),
m AS (INSERT INTO ${s}.messages (session_id, seq, body)
  SELECT s.id, s.message_count - 2 + v.o, v.b FROM s, (VALUES (0, $3::text), (1, $4::text)) AS v(o, b))
${search}
SELECT 1 FROM s`;
}

const moveStatement = (s) => `WITH l AS (SELECT x.id FROM ${s}.sessions AS x
  WHERE x.id IN (SELECT DISTINCT p.session_id FROM ${s}.search_pending AS p LIMIT 200)
  FOR NO KEY UPDATE OF x SKIP LOCKED),
d AS (DELETE FROM ${s}.search_pending AS p USING l WHERE p.session_id = l.id RETURNING p.session_id, p.seq, p.text),
i AS (INSERT INTO ${s}.search_rows (session_id, seq, text) SELECT * FROM d)
SELECT count(*)::integer AS n FROM d`;

/**
 * One design's schema, its storage after 200 turns, and a `rate()` that measures turns per
 * second for SECONDS (called once per round: the rounds visit every design in turn, so
 * drift on the machine hits all of them alike).
 */
async function writeSide(d, i) {
  const s = await schemaFor(d, i);
  const c = await pool.connect();
  const rev = { storage: 1, rate: 1 };
  let k = 0;
  const text = { name: `turn_${i}`, text: turnStatement(s, d) };
  const step = async (id) => {
    const [u, a] = turns[k++ % turns.length];
    const values = [id, rev[id], body('user', u), body('assistant', a)];
    if (d.search !== false) values.push(`A${u.toLowerCase()}A${a.toLowerCase()}`);
    const r = await c.query({ ...text, values });
    if (r.rowCount !== 1) throw new Error('lost the revision race');
    rev[id]++;
  };
  const mover = d.deferred && !d.noMove;
  let moving = Promise.resolve();
  const drain = async () => {
    while ((await pool.query(moveStatement(s))).rows[0].n > 0);
    if (d.flush) await pool.query(`SELECT gin_clean_pending_list('${s}.search_rows_text_idx')`);
  };
  const sizeOf = async (table) =>
    Number(
      (await pool.query(`SELECT pg_total_relation_size($1) AS n`, [`${s}.${table}`])).rows[0].n,
    );
  // The mover of a deferred design runs every 100 ms on its own connection while turns
  // are written, as the store's indexer does; what is left when the turns stop is drained
  // inside the measured time.
  let timer;
  const startMover = () => {
    if (mover) timer = setInterval(() => (moving = moving.then(drain)), 100);
  };
  const stopMover = async () => {
    clearInterval(timer);
    await moving;
    if (mover) await drain();
  };
  startMover();
  for (let t = 0; t < 200; t++) await step('storage');
  await stopMover();
  await pool.query(`VACUUM ${s}.search_rows, ${s}.search_pending, ${s}.messages`);
  const messages = await sizeOf('messages');
  const search = (await sizeOf('search_rows')) + (await sizeOf('search_pending'));
  for (let t = 0; t < 100; t++) await step('rate'); // warm-up
  await stopMover();
  const rate = async () => {
    await pool.query('CHECKPOINT');
    const t0 = performance.now();
    let n = 0;
    startMover();
    while (performance.now() - t0 < SECONDS * 1000) {
      await step('rate');
      n++;
    }
    await stopMover();
    return n / ((performance.now() - t0) / 1000);
  };
  const dispose = async () => {
    c.release();
    await pool.query(`DROP SCHEMA ${s} CASCADE`);
  };
  return { d, messages, search, rate, dispose, rates: [] };
}

const mib = (n) => (n / 1048576).toFixed(2);
console.log(
  `search designs — a turn = 2 messages of ~1 KB of prose-like text; 1 writer, median of ${ROUNDS} round-robin rounds of ${SECONDS}s; storage after 200 turns (VACUUMed)\n`,
);
const results = [];
for (const [i, d] of WRITE_DESIGNS.entries()) results.push(await writeSide(d, i));
for (let round = 0; round < ROUNDS; round++) for (const r of results) r.rates.push(await r.rate());
for (const r of results) await r.dispose();
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
// Ratios are medians of per-round ratios: both sides of one round saw the same machine.
for (const r of results) {
  r.rateMedian = median(r.rates);
  r.overRaw = median(r.rates.map((x, j) => x / results[0].rates[j]));
}
console.log(
  'design                                                   turns/s  /raw   messages  search   total/raw rows',
);
for (const r of results) {
  console.log(
    `${r.d.name.padEnd(56)} ${r.rateMedian.toFixed(0).padStart(6)}  ${(r.overRaw * 100).toFixed(0).padStart(3)} %  ${mib(r.messages)} MiB ${mib(r.search)} MiB  ${((r.messages + r.search) / r.messages).toFixed(2)}x`,
  );
}

if (process.env.DESIGNS_SEARCH === '0') {
  await pool.end();
  process.exit(0);
}

// ---- search over 10,000 sessions × 100 messages (50 turn rows each), per design.
const Q = `${S}_q`;
const SESSIONS = 10_000;
const t0 = performance.now();
await pool.query(`DROP SCHEMA IF EXISTS ${Q} CASCADE; CREATE SCHEMA ${Q};
CREATE TABLE ${Q}.sessions (id text COLLATE "C" PRIMARY KEY, updated_at timestamptz NOT NULL);
CREATE INDEX ON ${Q}.sessions (updated_at, id);
CREATE TABLE ${Q}.search_rows (session_id text COLLATE "C", seq integer, text text NOT NULL, PRIMARY KEY (session_id, seq));
INSERT INTO ${Q}.sessions SELECT 's' || lpad(g::text, 5, '0'), timestamptz '2024-01-01' + g * interval '1 minute'
  FROM generate_series(1, ${SESSIONS}) AS g;`);
const next = prng(99);
for (let b = 0; b < SESSIONS / 100; b++) {
  const ids = [];
  const seqs = [];
  const texts = [];
  for (let n = b * 100 + 1; n <= b * 100 + 100; n++) {
    for (let t = 0; t < 50; t++) {
      ids.push(`s${String(n).padStart(5, '0')}`);
      seqs.push(t * 2);
      texts.push(`A${prose(next, 100 + (t % 3) * 20)}A${prose(next, 100 + (t % 2) * 30)}`);
    }
  }
  await pool.query(
    `INSERT INTO ${Q}.search_rows SELECT * FROM unnest($1::text[], $2::integer[], $3::text[])`,
    [ids, seqs, texts],
  );
}
console.log(
  `\nsearch: 10,000 sessions × 100 messages of ~120 characters, loaded in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
const QUERIES = ['mon', 'xqz', 'quazen lostr', 'mirely lyhog'];
async function searchTimes(table, label, build) {
  const tb = performance.now();
  await pool.query(build);
  await pool.query(`ANALYZE ${Q}.${table}`);
  const buildS = (performance.now() - tb) / 1000;
  const size = Number(
    (await pool.query(`SELECT pg_total_relation_size($1) AS n`, [`${Q}.${table}`])).rows[0].n,
  );
  const out = [];
  for (const q of QUERIES) {
    const sql = `SELECT s.id FROM ${Q}.sessions AS s WHERE s.id IN (SELECT r.session_id FROM ${Q}.${table} AS r
      WHERE r.text LIKE $1) ORDER BY s.updated_at DESC, s.id DESC LIMIT 20`;
    const times = [];
    for (let i = 0; i < 9; i++) {
      const t = performance.now();
      await pool.query(sql, [`%${q}%`]);
      times.push(performance.now() - t);
    }
    out.push(times.sort((a, b) => a - b)[4]);
  }
  console.log(
    `${label.padEnd(46)} ${out.map((x) => `${x.toFixed(1).padStart(7)} ms`).join(' ')}   ${mib(size)} MiB (index built in ${buildS.toFixed(0)} s)`,
  );
}
console.log(
  `design (median of 9)                           ${QUERIES.map((q) => JSON.stringify(q).padStart(10)).join(' ')}`,
);
await searchTimes(
  'search_rows',
  'GIN over one row per turn (v4, v5)',
  `CREATE INDEX ON ${Q}.search_rows USING gin (text gin_trgm_ops)`,
);
await pool.query(`CREATE TABLE ${Q}.blocks AS SELECT session_id, min(seq) AS seq, string_agg(text, '' ORDER BY seq) AS text
  FROM ${Q}.search_rows GROUP BY session_id, seq / 16`);
await searchTimes(
  'blocks',
  'GIN over rows of 8 turns (~2 KB)',
  `CREATE INDEX ON ${Q}.blocks (session_id); CREATE INDEX ON ${Q}.blocks USING gin (text gin_trgm_ops)`,
);
// The GiST build takes minutes on 2 CPUs: only with DESIGNS_GIST=1.
if (process.env.DESIGNS_GIST === '1') {
  await pool.query(`DROP INDEX ${Q}.search_rows_text_idx`);
  await searchTimes(
    'search_rows',
    'GiST siglen=64 over one row per turn',
    `CREATE INDEX ON ${Q}.search_rows USING gist (text gist_trgm_ops(siglen=64))`,
  );
}
await pool.query(`DROP SCHEMA ${Q} CASCADE`);
await pool.end();
