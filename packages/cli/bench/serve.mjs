// Measures what `sessionkit serve` adds on top of the store on a big store (default
// 100,000 sessions): the first page of the session list and a search, each through the
// viewer (its server time, from the Server-Timing header) beside the same `list` call
// made directly on the same store instance, in alternating rounds; and a 20,000-message
// session's page beside a short session's. Not a test: it prints figures. Needs a build
// (`pnpm build`) and, for PostgreSQL, the server at $SESSIONKIT_TEST_POSTGRES_URL.
//
// Usage: node bench/serve.mjs [sessions] [file] [postgres]      (default: 100000 file postgres)
// BENCH_ROUNDS (default 40) rounds per figure, BENCH_SEARCH_ROUNDS (default 8) for the
// searches; BENCH_KEEP=1 keeps the seeded stores (and
// reuses them on the next run of the same size) instead of removing them.
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSessionKitError } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import { openPostgresStore } from '@sessionkit/postgres';
import pg from 'pg';
import { startViewer } from '../dist/index.js';
import { benchPostgresUrl } from './postgres-url.mjs';

const pgUrl = benchPostgresUrl();
const args = process.argv.slice(2);
const size = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
const backends = args.filter((a) => !/^\d+$/.test(a));
if (backends.length === 0) backends.push('file', 'postgres');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
// A search of the file store reads every session's search file: fewer rounds.
const SEARCH_ROUNDS = Number(process.env.BENCH_SEARCH_ROUNDS ?? 8);
const KEEP = process.env.BENCH_KEEP === '1';
const BIG = 20_000;
const NEEDLE = 'zebra-needle';
const SEEDED_MARK = 'bench-seeded';

/** Session `i`: two short messages; every 1,000th mentions the needle. */
function session(i) {
  const rare = i % 1000 === 0 ? ` ${NEEDLE}` : '';
  return {
    id: `s-${String(i).padStart(7, '0')}`,
    title: `Session ${i}`,
    folder: `/work/p${i % 7}`,
    updatedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000),
    messages: [
      { role: 'user', content: `question ${i} about the parser${rare}` },
      { role: 'assistant', content: `answer ${i}` },
    ],
  };
}

async function seed(store) {
  try {
    await store.load(SEEDED_MARK);
    console.log('  reusing the seeded store');
    return;
  } catch (e) {
    if (!isSessionKitError(e, 'not_found')) throw e;
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      for (let i = next++; i < size; i = next++) {
        await store.create(session(i));
        if (i % 10_000 === 0) process.stdout.write(`  seeded ${i}/${size}\r`);
      }
    }),
  );
  const big = await store.create({ id: 'big-session', title: 'Twenty thousand messages' });
  for (let start = 0; start < BIG; start += 2000) {
    const append = Array.from({ length: 2000 }, (_, k) => ({
      role: k % 2 ? 'assistant' : 'user',
      content: `message ${start + k + 1} of the long run`,
    }));
    await store.commit(big.id, { append });
  }
  await store.create({
    id: SEEDED_MARK,
    title: 'seeded',
    updatedAt: new Date(Date.UTC(2000, 0, 1)),
  });
  console.log(
    `  seeded ${size} sessions in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];

async function direct(store, options) {
  const t = performance.now();
  await store.list(options);
  return performance.now() - t;
}

/** The viewer's server time for `path` (Server-Timing total) and the store's share of it. */
async function viewed(viewer, path) {
  const response = await fetch(new URL(path, viewer.url));
  await response.text();
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  const timing = response.headers.get('server-timing') ?? '';
  const store = Number(/store;dur=([\d.]+)/.exec(timing)?.[1]);
  const total = Number(/total;dur=([\d.]+)/.exec(timing)?.[1]);
  return { total, store };
}

/** Alternates the direct call and the viewer's page `rounds` times (after warm-ups). */
async function compare(store, viewer, options, path, rounds = ROUNDS) {
  const warmUps = rounds >= 20 ? 3 : 1;
  const d = [];
  const v = [];
  const own = [];
  for (let r = 0; r < rounds + warmUps; r++) {
    let a;
    let b;
    if (r % 2 === 0) {
      a = await direct(store, options);
      b = await viewed(viewer, path);
    } else {
      b = await viewed(viewer, path);
      a = await direct(store, options);
    }
    if (r < warmUps) continue;
    d.push(a);
    v.push(b.total);
    own.push(b.total - b.store);
  }
  return { direct: d, viewer: v, own };
}

function row(label, m) {
  const f = (x) => x.toFixed(1).padStart(7);
  console.log(
    `  ${label.padEnd(34)} store list ${f(median(m.direct))} ms (p90 ${f(p90(m.direct))})   viewer ${f(median(m.viewer))} ms (p90 ${f(p90(m.viewer))})   viewer's own part ${f(median(m.own))} ms`,
  );
}

async function pageTimes(viewer, path) {
  const totals = [];
  for (let r = 0; r < ROUNDS + 3; r++) {
    const { total } = await viewed(viewer, path);
    if (r >= 3) totals.push(total);
  }
  return totals;
}

async function measure(name, store) {
  console.log(`\n${name}: ${size.toLocaleString('en-US')} sessions`);
  await seed(store);
  const viewer = await startViewer({ store, port: 0 });
  try {
    row('first list page (50)', await compare(store, viewer, { limit: 51 }, '/'));
    row(
      `search "${NEEDLE}" (~${size / 1000} hits)`,
      await compare(store, viewer, { query: NEEDLE, limit: 51 }, `/?q=${NEEDLE}`, SEARCH_ROUNDS),
    );
    row(
      'search "parser" (every session)',
      await compare(store, viewer, { query: 'parser', limit: 51 }, '/?q=parser', SEARCH_ROUNDS),
    );
    await viewed(viewer, '/?q=Twenty+thousand');
    const big = await pageTimes(viewer, '/s/big-session');
    await viewed(viewer, '/');
    const short = await pageTimes(viewer, `/s/s-${String(size - 1).padStart(7, '0')}`);
    const t = performance.now();
    await store.load('big-session');
    const load = performance.now() - t;
    console.log(
      `  session page: ${BIG.toLocaleString('en-US')} messages ${median(big).toFixed(1)} ms (p90 ${p90(big).toFixed(1)}), 2 messages ${median(short).toFixed(1)} ms (p90 ${p90(short).toFixed(1)}); one full load of the big session ${load.toFixed(1)} ms`,
    );
  } finally {
    await viewer.close();
  }
}

if (backends.includes('file')) {
  const dir = join(tmpdir(), `sessionkit-bench-serve-${size}`);
  const store = new FileStore({ dir, sync: false });
  try {
    await measure('file', store);
  } finally {
    await store.close();
    if (!KEEP) rmSync(dir, { recursive: true, force: true });
    else if (existsSync(dir)) console.log(`  kept ${dir}`);
  }
}
if (backends.includes('postgres')) {
  const schema = `sk_bench_serve_${size}`;
  const store = await openPostgresStore(pgUrl, { schema });
  try {
    await measure('postgres', store);
  } finally {
    await store.close();
    if (!KEEP) {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    } else console.log(`  kept schema ${schema}`);
  }
}
