// Measures `sessionkit migrate --from file:… --to postgres://…`: wall time, rate and the
// peak memory (RSS) of the command, for two store sizes so that flat memory shows as a
// ratio from one run. Not a test: it prints figures. Needs a build (`pnpm build`) and
// PostgreSQL at $SESSIONKIT_TEST_POSTGRES_URL (default: the repository's .env.example).
//
// Usage: node --expose-gc bench/migrate.mjs [sessions…]     (default: 2000 10000)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listRows } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import pg from 'pg';
import { benchPostgresUrl } from './postgres-url.mjs';

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const url = benchPostgresUrl();
const sizes = process.argv.slice(2).map(Number);
if (sizes.length === 0) sizes.push(2000, 10000);

const HEAP_CAP_MB = Number(process.env.BENCH_HEAP_CAP_MB ?? 48);
const filler = (n, tag) => `${tag} `.padEnd(n, 'lorem ipsum dolor sit amet ');

/** A file store of `n` sessions: 6 messages each (~1.2 KB), every 10th a branch, events and status on every 5th. */
async function makeSource(dir, n) {
  const store = new FileStore({ dir, sync: false });
  let lastRoot;
  for (let i = 0; i < n; i++) {
    const messages = Array.from({ length: 6 }, (_, k) => ({
      role: k % 2 === 0 ? 'user' : 'assistant',
      content: filler(200, `m${k} of ${i}`),
    }));
    if (i % 10 === 9 && lastRoot) {
      const b = await store.branch(lastRoot, 3);
      await store.commit(b.id, { append: messages.slice(0, 2) });
    } else {
      const s = await store.create({
        id: `bench-${String(i).padStart(6, '0')}`,
        title: `Session ${i}`,
        folder: `/work/p${i % 7}`,
        metadata: { n: String(i) },
        messages,
      });
      lastRoot = s.id;
    }
    if (i % 5 === 0 && lastRoot) {
      await store.saveRuntimeStatus(lastRoot, { step: i, ok: true });
      await store.append(lastRoot, 'tool.run', { tool: 'ls', i });
    }
  }
  await store.close();
}

/**
 * The heap a FileStore on the source holds after a full GC: once opened and listed (its
 * index), and after reading every session as the migration does (load, runtime status,
 * events: the adapter keeps per-session tips, event tails and paths of what it touched).
 * That is the part of the command's memory that grows with the store and belongs to the
 * source adapter, not to the migration.
 */
async function fileAdapterHeapMb(dir) {
  if (typeof globalThis.gc !== 'function') return { index: Number.NaN, touched: Number.NaN };
  const heap = () => {
    globalThis.gc();
    return process.memoryUsage().heapUsed;
  };
  const before = heap();
  const store = new FileStore({ dir, sync: false });
  await store.list({ limit: 1 });
  const index = heap() - before;
  for await (const row of listRows(store, { pageSize: 500, where: 'bench' })) {
    await store.load(row.id);
    await store.loadRuntimeStatus(row.id);
    await store.events(row.id);
  }
  const touched = heap() - before;
  await store.close();
  return { index: index / 1024 / 1024, touched: touched / 1024 / 1024 };
}

/** Runs the command under /usr/bin/time -v; returns seconds, peak RSS in MB, exit code. */
function measure(args, env = process.env) {
  const useTime = existsSync('/usr/bin/time');
  const cmd = useTime ? '/usr/bin/time' : process.execPath;
  const argv = useTime ? ['-v', process.execPath, bin, ...args] : [bin, ...args];
  const t0 = performance.now();
  const r = spawnSync(cmd, argv, { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 });
  const seconds = (performance.now() - t0) / 1000;
  const kb = Number(
    /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? Number.NaN,
  );
  return { seconds, rssMb: kb / 1024, code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const admin = new pg.Client({ connectionString: url });
admin.on('error', () => {});
await admin.connect();
const results = [];
for (const n of sizes) {
  const work = mkdtempSync(join(tmpdir(), 'sk-bench-migrate-'));
  const schema = `sk_bench_migrate_${process.pid}_${n}`;
  const target = new URL(url);
  target.searchParams.set('schema', schema);
  try {
    process.stdout.write(`seeding ${n} sessions … `);
    await makeSource(join(work, 'a'), n);
    console.log('done');
    const adapterMb = await fileAdapterHeapMb(join(work, 'a'));
    const args = ['migrate', '--from', `file:${join(work, 'a')}`, '--to', target.href, '--quiet'];
    const r = measure(args);
    const verified = r.code === 0 && r.stdout.includes('verified: the target equals the source');
    if (!verified) console.error(r.stdout, r.stderr);
    results.push({ n, ...r, verified, adapterMb });
    console.log(
      `${String(n).padStart(7)} sessions: ${r.seconds.toFixed(1)} s (copy + verify), ` +
        `${(n / r.seconds).toFixed(0)} sessions/s, peak RSS ${r.rssMb.toFixed(1)} MB, ` +
        `exit ${r.code}, ${verified ? 'verified' : 'NOT verified'}; ` +
        `a FileStore on the source holds ${adapterMb.index.toFixed(1)} MB of heap once listed, ` +
        `${adapterMb.touched.toFixed(1)} MB after reading every session`,
    );
    if (n === Math.max(...sizes)) {
      // The same migration again into a fresh schema with the V8 heap capped: finishing
      // shows that what the command retains stays under the cap, whatever it allocates.
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      const capped = measure(args, {
        ...process.env,
        NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MB}`,
      });
      const ok =
        capped.code === 0 && capped.stdout.includes('verified: the target equals the source');
      if (!ok) console.error(capped.stdout, capped.stderr);
      console.log(
        `${String(n).padStart(7)} sessions with the heap capped at ${HEAP_CAP_MB} MB: ` +
          `${capped.seconds.toFixed(1)} s, peak RSS ${capped.rssMb.toFixed(1)} MB, exit ${capped.code}, ${ok ? 'verified' : 'NOT verified'}`,
      );
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    rmSync(work, { recursive: true, force: true });
  }
}
await admin.end();
if (results.length >= 2) {
  const [small, large] = [results[0], results[results.length - 1]];
  console.log(
    `peak RSS ratio ${large.n}/${small.n} sessions: ${(large.rssMb / small.rssMb).toFixed(2)} ` +
      `(sessions ×${(large.n / small.n).toFixed(1)}); growth ${(large.rssMb - small.rssMb).toFixed(1)} MB, ` +
      `of which the source FileStore's own state ${(large.adapterMb.touched - small.adapterMb.touched).toFixed(1)} MB`,
  );
}
