// Benchmark of @sessionkit/postgres against the raw ceiling of the same SQL shape.
// Not a test: prints figures. Needs a build (`pnpm --filter @sessionkit/postgres build`)
// and PostgreSQL at $SESSIONKIT_TEST_POSTGRES_URL (default: the repository's .env.example).
// Usage: pnpm --filter @sessionkit/postgres bench   [BENCH_SECONDS=3]
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openPostgresStore } from '../dist/index.js';
import { scaleBench } from './scale-bench.mjs';
import { searchBench, storageBench } from './search-bench.mjs';
import { prng, prose } from './text.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const url =
  process.env.SESSIONKIT_TEST_POSTGRES_URL ||
  /^SESSIONKIT_TEST_POSTGRES_URL=(.*)$/m.exec(
    readFileSync(new URL('../../../.env.example', import.meta.url), 'utf8'),
  )?.[1] ||
  'postgres://postgres@127.0.0.1:5432/test';

const schema = `sk_bench_${process.pid}`;
const titlesSchema = `sk_bench_titles_${process.pid}`;
const listSchema = `sk_bench_list_${process.pid}`;
// Turns of prose-like text (bench/text.mjs): a repeated filler would compress to nothing
// and index a few dozen trigrams, which flatters every search design.
const TURNS = (() => {
  const next = prng(7);
  return Array.from({ length: 4000 }, () => [prose(next, 1000), prose(next, 1000)]);
})();
const turn = (i) => [
  { role: 'user', content: TURNS[i % TURNS.length][0] },
  { role: 'assistant', content: TURNS[i % TURNS.length][1] },
];
const history = (n) => Array.from({ length: n / 2 }, (_, i) => turn(i)).flat();
const gc = () => globalThis.gc?.();
const fmt = (x) => x.toFixed(0).padStart(7);

const admin = new pg.Pool({ connectionString: url, max: 2 });
admin.on('error', () => {});

// Server CPU of a contender: the CPU time of the backends its pool opened (by
// application_name), read from /proc/<pid>/schedstat (nanoseconds; the server runs here).
const app = (name) => `skbench_${name}_${process.pid}`;
async function backendPids(name) {
  const r = await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
    app(name),
  ]);
  return r.rows.map((x) => x.pid);
}
function cpuNanos(pids) {
  const out = new Map();
  for (const pid of pids) {
    try {
      out.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // A backend that ended: its time is lost to both sides alike.
    }
  }
  return out;
}
/** CPU nanoseconds the contender's backends spent since `before` (new backends from 0). */
async function cpuSince(name, before) {
  let total = 0;
  for (const [pid, ns] of cpuNanos(await backendPids(name))) total += ns - (before.get(pid) ?? 0);
  return total;
}

// The adapter: an owned pool of 10 (pg's default); the same with search scope "titles".
const store = await openPostgresStore(
  { connectionString: url, application_name: app('adapter') },
  { schema },
);
const titlesStore = await openPostgresStore(
  { connectionString: url, application_name: app('titles') },
  { schema: titlesSchema, search: 'titles' },
);
/**
 * Windowed reads (issue 9): `{last: 50}` of a 10,000-message session beside a whole
 * `loadMessages` of it and beside `{last: 50}` of a 100-message session (messages of
 * ~1 KB). Targets: the window ≥ 20x faster than the whole read, within 2x of the small one.
 */
async function windowBench() {
  await store.create({ id: 'win-10k', messages: history(10_000) });
  await store.create({ id: 'win-100', messages: history(100) });
  await admin.query(`ANALYZE "${schema}".messages`);
  gc();
  const whole = await timeIt(15, () => store.loadMessages('win-10k'));
  const last10k = await timeIt(200, () => store.loadMessages('win-10k', { last: 50 }));
  const last100 = await timeIt(200, () => store.loadMessages('win-100', { last: 50 }));
  const page = await timeIt(200, () =>
    store.loadMessageWindow('win-10k', { offset: 5000, limit: 50 }),
  );
  console.log(`\nwindowed reads (median; messages of ~1 KB):`);
  console.log(`loadMessages of 10,000 messages (whole):  ${whole.toFixed(2)} ms`);
  console.log(
    `{last: 50} of 10,000 messages:            ${last10k.toFixed(2)} ms (${(whole / last10k).toFixed(0)}x faster than whole; target >= 20x)`,
  );
  console.log(
    `{last: 50} of 100 messages:               ${last100.toFixed(2)} ms (10,000-message window = ${(last10k / last100).toFixed(2)}x of it; target <= 2x)`,
  );
  console.log(`{offset: 5000, limit: 50} of 10,000:      ${page.toFixed(2)} ms`);
}

// The raw ceiling: the same tables, a pool of its own, one statement per turn.
const raw = new pg.Pool({ connectionString: url, max: 10, application_name: app('raw') });
raw.on('error', () => {});
if (process.env.BENCH_ONLY === 'windows') {
  await windowBench();
  await store.close();
  await titlesStore.close();
  await raw.end();
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  await admin.query(`DROP SCHEMA "${titlesSchema}" CASCADE`);
  await admin.end();
  process.exit(0);
}
const RAW_TURN = {
  name: 'raw_turn',
  text: `WITH s AS (
  UPDATE "${schema}".sessions SET revision = revision + 1, message_count = message_count + 2,
    updated_at = greatest(now(), updated_at + interval '1 millisecond')
  WHERE id = $1 AND revision = $2
  RETURNING id, message_count
)
INSERT INTO "${schema}".messages (session_id, seq, body)
SELECT s.id, s.message_count - 2 + v.o, v.b FROM s, (VALUES (0, $3::text), (1, $4::text)) AS v(o, b)
RETURNING 1`,
};

/**
 * Runs `writers` loops for SECONDS after a short warm-up, then `finish` (the adapter's
 * search indexing left over from the window belongs to it); returns turns per second and
 * the server CPU per turn (µs) of the contender's backends.
 */
async function measure(writers, step, seconds = SECONDS, finish = async () => {}, who = 'raw') {
  const state = Array.from({ length: writers }, (_, w) => ({ w }));
  const until = (deadline) =>
    Promise.all(
      state.map(async (s) => {
        let n = 0;
        while (performance.now() < deadline) {
          await step(s);
          n++;
        }
        return n;
      }),
    );
  await until(performance.now() + 500); // warm-up: prepared statements, caches
  await finish();
  gc();
  const cpu0 = cpuNanos(await backendPids(who));
  const t0 = performance.now();
  const counts = await until(t0 + seconds * 1000);
  await finish();
  const elapsed = (performance.now() - t0) / 1000;
  const turns = counts.reduce((a, b) => a + b, 0);
  return { rate: turns / elapsed, cpuUs: (await cpuSince(who, cpu0)) / 1e3 / turns };
}

/**
 * Copies session `from` of `schema` to a new id `to`: header and message rows. Not its
 * search rows: a commit never reads them, and indexing 10 MB of text per copy would make
 * the setup take minutes (the template keeps its own, so the index is not empty).
 */
async function copySession(schemaName, from, to) {
  const q = `"${schemaName}"`;
  await admin.query(
    `INSERT INTO ${q}.sessions SELECT (jsonb_populate_record(NULL::${q}.sessions,
       to_jsonb(x) || jsonb_build_object('id', $2::text))).* FROM ${q}.sessions AS x WHERE x.id = $1`,
    [from, to],
  );
  await admin.query(
    `INSERT INTO ${q}.messages SELECT $2, seq, body FROM ${q}.messages WHERE session_id = $1`,
    [from, to],
  );
}

/** Sessions and step functions of one configuration (history length × writers). */
async function setupConfig(historyLength, writers) {
  const tag = `h${historyLength}-w${writers}`;
  const base = history(historyLength);
  // One session made by each store; the others are row copies of it (fast to set up).
  await store.create({ id: `tpl-${tag}`, messages: base });
  await titlesStore.create({ id: `tpl-${tag}`, messages: base });
  const ids = [];
  for (let w = 0; w < writers; w++) {
    const id = { a: `a-${tag}-${w}`, r: `r-${tag}-${w}`, t: `t-${tag}-${w}` };
    for (const copy of [id.a, id.r]) await copySession(schema, `tpl-${tag}`, copy);
    await copySession(titlesSchema, `tpl-${tag}`, id.t);
    ids.push(id);
  }
  const revs = { a: ids.map(() => 1), r: ids.map(() => 1), t: ids.map(() => 1) };
  const steps = {
    adapter: async (s) => {
      const res = await store.commit(ids[s.w].a, {
        expectedRevision: revs.a[s.w],
        append: turn(historyLength + revs.a[s.w]),
      });
      revs.a[s.w] = res.revision;
    },
    raw: async (s) => {
      const [u, a] = turn(historyLength + revs.r[s.w]);
      const r = await raw.query({
        ...RAW_TURN,
        values: [ids[s.w].r, revs.r[s.w], JSON.stringify(u), JSON.stringify(a)],
      });
      if (r.rowCount !== 2) throw new Error('raw turn lost its revision race');
      revs.r[s.w]++;
    },
    // Search scope "titles": the turn writes no search text at all.
    titles: async (s) => {
      const res = await titlesStore.commit(ids[s.w].t, {
        expectedRevision: revs.t[s.w],
        append: turn(historyLength + revs.t[s.w]),
      });
      revs.t[s.w] = res.revision;
    },
  };
  return {
    historyLength,
    writers,
    steps,
    samples: { adapter: [], raw: [], titles: [] },
  };
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
// Ratios are medians of per-round ratios: both sides of one round saw the same machine.
const ratioOf = (a, b) => median(a.map((x, i) => x / b[i]));

console.log(
  `@sessionkit/postgres benchmark — median of ${ROUNDS} rounds of ${SECONDS}s per figure, every figure measured once per round (round-robin, CHECKPOINT before each); node ${process.version}, ${cpus().length} CPUs`,
);
const version = (await admin.query('SHOW server_version')).rows[0].server_version;
console.log(
  `PostgreSQL ${version}; a turn = user + assistant message of ~1 KB each, with expectedRevision`,
);
console.log(
  'raw = one CTE statement on the same tables (revision check + 2 message rows; no search rows)',
);
console.log(
  'adapter = search scope "messages" (the default), its background indexing included in its time\n',
);
const HISTORIES = [10, 1_000, 5_000];
const configs = [];
for (const h of HISTORIES) configs.push(await setupConfig(h, 1));
await admin.query(`VACUUM ANALYZE "${schema}".sessions`);
// Pending search rows indexed, so no step inherits another's indexing.
const drainSearch = () => store.indexPendingSearch();
// A throw-away pass first: plan caches, prepared statements.
for (const c of configs)
  for (const [name, step] of Object.entries(c.steps))
    await measure(c.writers, step, 0.5, drainSearch, name);
for (let round = 0; round < ROUNDS; round++) {
  for (const c of configs) {
    for (const [name, step] of Object.entries(c.steps)) {
      await admin.query('CHECKPOINT');
      const finish = name === 'adapter' ? drainSearch : undefined;
      c.samples[name].push(await measure(c.writers, step, SECONDS, finish, name));
    }
  }
}
const rates = (xs) => xs.map((x) => x.rate);
const cpus_ = (xs) => xs.map((x) => x.cpuUs);
console.log(
  'turn commits/s, 1 writer   adapter      raw   adapter/raw   CPU/turn adapter, raw, /raw   titles (/raw)',
);
const results = {};
for (const c of configs) {
  const a = c.samples.adapter;
  const r = c.samples.raw;
  const t = c.samples.titles;
  const row = {
    adapter: median(rates(a)),
    raw: median(rates(r)),
    overRaw: ratioOf(rates(a), rates(r)),
    cpuAdapter: median(cpus_(a)),
    cpuRaw: median(cpus_(r)),
    cpuOverRaw: ratioOf(cpus_(a), cpus_(r)),
    titles: median(rates(t)),
    titlesOverRaw: ratioOf(rates(t), rates(r)),
    samples: rates(a),
  };
  results[c.historyLength] = row;
  const pct = (x) => `${(x * 100).toFixed(0)} %`;
  console.log(
    `history ${String(c.historyLength).padStart(5)}           ${fmt(row.adapter)}  ${fmt(row.raw)}   ${pct(row.overRaw).padStart(6)}      ${row.cpuAdapter.toFixed(0).padStart(4)} µs, ${row.cpuRaw.toFixed(0).padStart(4)} µs, ${row.cpuOverRaw.toFixed(2)}x   ${fmt(row.titles)} (${pct(row.titlesOverRaw)})`,
  );
}
const flat = ratioOf(results[5_000].samples, results[10].samples);
console.log(`commit(5,000)/commit(10): ${flat.toFixed(2)} (target: flat, >= 0.9)`);
for (const h of HISTORIES) {
  const r = results[h];
  console.log(
    `history ${h.toLocaleString('en-US')}: adapter/raw ${(r.overRaw * 100).toFixed(0)} % (target >= 70 %), server CPU per turn ${r.cpuOverRaw.toFixed(2)}x raw (target <= 1.5x)`,
  );
}

await storageBench({
  admin,
  open: (name, search) => openPostgresStore(url, { schema: name, search }),
  turn,
});

// Listing 20 of 10,000 sessions.
const listStore = await openPostgresStore(url, { schema: listSchema });
await admin.query(
  `INSERT INTO "${listSchema}".sessions (id, title, folder, created_at, updated_at)
   SELECT 's-' || lpad(g::text, 6, '0'), 'session number ' || g, 'f' || (g % 10), now(),
          timestamptz '2024-01-01' + g * interval '1 second'
   FROM generate_series(1, 10000) AS g`,
);
// The titles as the indexer writes them: title_search and a words row (block -1) each.
await admin.query(`UPDATE "${listSchema}".sessions SET title_search = lower(title)`);
await admin.query(
  `INSERT INTO "${listSchema}".search_words (session_id, epoch, block, words)
   SELECT id, search_epoch, -1, ' ' || lower(title) || ' ' FROM "${listSchema}".sessions`,
);
await admin.query(`ANALYZE "${listSchema}".sessions, "${listSchema}".search_words`);
async function timeIt(n, fn) {
  for (let i = 0; i < 5; i++) await fn();
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
console.log('');
const newest = await timeIt(50, () => listStore.list({ limit: 20 }));
const page = await listStore.list({ limit: 20 });
const cursor = { updatedAt: page[19].updatedAt, id: page[19].id };
const next = await timeIt(50, () => listStore.list({ limit: 20, startAfter: cursor }));
const folder = await timeIt(50, () =>
  listStore.list({ limit: 20, folder: 'f3', oldestFirst: true }),
);
const search = await timeIt(50, () => listStore.list({ limit: 20, query: 'number 777' }));
console.log(`list 20 of 10,000 (newest):          ${newest.toFixed(2)} ms (median of 50)`);
console.log(`list 20 of 10,000 (keyset page 2):   ${next.toFixed(2)} ms`);
console.log(`list 20 of 10,000 (folder, oldest):  ${folder.toFixed(2)} ms`);
console.log(`search "number 777" in 10,000:       ${search.toFixed(2)} ms`);
// The 10,000 × 100 load takes a minute or more: BENCH_SEARCH=0 skips it.
if (process.env.BENCH_SEARCH !== '0') await searchBench({ admin, listStore, listSchema, timeIt });
await listStore.close();

await windowBench();

// Store sizes: list and enforceMax at 10,000 and 1,000,000 sessions (BENCH_SCALE=0 skips it).
if (process.env.BENCH_SCALE !== '0') {
  await scaleBench({ admin, open: (name) => openPostgresStore(url, { schema: name }) });
}

// Loading a 20 MB transcript.
const chunk = 'x'.repeat(9_000);
const big = Array.from({ length: 2_300 }, (_, i) => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `${i}:${chunk}:é✓`,
}));
const bytes = JSON.stringify(big);
await store.create({ id: 'big', messages: big });
gc();
const loadMs = await timeIt(9, () => store.load('big'));
gc();
const parseMs = await timeIt(9, async () => JSON.parse(bytes));
console.log(
  `\nload of a ${(Buffer.byteLength(bytes) / 1e6).toFixed(1)} MB transcript: ${loadMs.toFixed(1)} ms; JSON.parse of the same bytes: ${parseMs.toFixed(1)} ms (${(loadMs / parseMs).toFixed(1)}x)`,
);

await store.close();
await titlesStore.close();
await raw.end();
await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
await admin.query(`DROP SCHEMA "${titlesSchema}" CASCADE`);
await admin.query(`DROP SCHEMA "${listSchema}" CASCADE`);
await admin.end();
