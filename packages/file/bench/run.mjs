// Benchmark of @sessionkit/file (not a test: it asserts nothing). Run after `build`:
//   pnpm --filter @sessionkit/file bench
// Prints turn-commit throughput at a short and a long history beside the machine's raw
// append+fsync ceiling, and listing latency over 10,000 sessions with empty and with
// 1,000-message transcripts.
import { promises as fsp, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { withFileLock } from '@sessionkit/core';
import { FileStore } from '../dist/index.js';

const COMMITS = Number(process.env.BENCH_COMMITS ?? 1500);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const root = mkdtempSync(join(tmpdir(), 'sk-file-bench-'));
const text = (n) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n);
const KB = text(1000);
const message = (role, i) => ({ role, content: `${i} ${KB}` });
const fmt = (n, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function rawCeiling(n) {
  const path = join(root, 'raw.bin');
  const handle = await fsp.open(path, 'a', 0o600);
  const buf = Buffer.alloc(2048, 120);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await handle.write(buf);
    await handle.datasync();
  }
  const ms = performance.now() - t0;
  await handle.close();
  return (n * 1000) / ms;
}

// The same append + fdatasync inside core's cross-process lock file (what every commit
// needs for multi-process safety): the ceiling any lock-file-based commit can reach.
async function lockedCeiling(n) {
  const path = join(root, 'raw-locked.bin');
  const handle = await fsp.open(path, 'a', 0o600);
  const buf = Buffer.alloc(2048, 120);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await withFileLock(join(root, 'raw.lock'), async () => {
      await handle.write(buf);
      await handle.datasync();
    });
  }
  const ms = performance.now() - t0;
  await handle.close();
  return (n * 1000) / ms;
}

async function commitRate(history, n) {
  const dir = join(root, `commit-${history}`);
  const store = new FileStore({ dir });
  const messages = Array.from({ length: history }, (_, i) =>
    message(i % 2 ? 'assistant' : 'user', i),
  );
  await store.create({ id: 's', messages });
  await store.commit('s', { append: [message('user', -1)] }); // warm up
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await store.commit('s', {
      append: [message('user', i), message('assistant', i)],
      increment: { turnCount: 1 },
    });
  }
  const ms = performance.now() - t0;
  const count = (await store.list({ limit: 1 }))[0].messageCount;
  await store.close();
  return { opsPerSec: (n * 1000) / ms, finalMessages: count };
}

async function listing(perSession) {
  const dir = join(root, `list-${perSession}`);
  // Setup with sync:false (no fsync per create) to keep it bounded; the listing measured
  // below does not depend on how the files were written.
  const writer = new FileStore({ dir, sync: false });
  const transcript = Array.from({ length: perSession }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `message ${i} ${text(60)}`,
  }));
  const t0 = performance.now();
  const base = Date.UTC(2025, 0, 1);
  for (let i = 0; i < SESSIONS; i++) {
    await writer.create({
      id: `s${String(i).padStart(6, '0')}`,
      folder: `f${i % 10}`,
      title: `session ${i}`,
      updatedAt: new Date(base + i * 1000),
      messages: transcript,
    });
  }
  const setupMs = performance.now() - t0;
  await writer.close();
  const cold = new FileStore({ dir });
  const c0 = performance.now();
  const first = await cold.list({ limit: 20 });
  const coldMs = performance.now() - c0;
  const reps = 50;
  const w0 = performance.now();
  for (let i = 0; i < reps; i++) await cold.list({ limit: 20 });
  const warmMs = (performance.now() - w0) / reps;
  const readsBefore = cold.stats.transcriptReads;
  const f0 = performance.now();
  await cold.list({ limit: 20, folder: 'f3', oldestFirst: true });
  const filteredMs = performance.now() - f0;
  if (cold.stats.transcriptReads !== readsBefore || first.length !== 20)
    throw new Error('bad listing');
  await cold.close();
  return { setupMs, coldMs, warmMs, filteredMs };
}

try {
  console.log(
    `@sessionkit/file benchmark — node ${process.version}, ${process.platform}, temp dir ${tmpdir()}`,
  );
  console.log(`commits per run: ${COMMITS}; sessions for listing: ${SESSIONS}\n`);
  const raw = await rawCeiling(COMMITS);
  const locked = await lockedCeiling(COMMITS);
  const short = await commitRate(10, COMMITS);
  const long = await commitRate(10_000, COMMITS);
  console.log('turn commit (append user + assistant, ~1 KB each, fsync per commit):');
  console.log(`  raw ceiling: 2 KB append + fdatasync   ${fmt(raw)} ops/s`);
  console.log(
    `  same inside core withFileLock           ${fmt(locked)} ops/s  (ceiling for any locked commit)`,
  );
  console.log(
    `  commit at history 10                    ${fmt(short.opsPerSec)} ops/s  (history ${short.finalMessages} at the end)`,
  );
  console.log(
    `  commit at history 10,000                ${fmt(long.opsPerSec)} ops/s  (history ${long.finalMessages} at the end)`,
  );
  console.log(
    `  ratio commit(10,000) / commit(10)       ${fmt(long.opsPerSec / short.opsPerSec, 2)}  (target >= 0.8)`,
  );
  console.log(
    `  ratio adapter(10) / raw                 ${fmt((100 * short.opsPerSec) / raw, 1)} %  (target >= 50 %)`,
  );
  console.log(
    `  ratio adapter(10,000) / raw             ${fmt((100 * long.opsPerSec) / raw, 1)} %`,
  );
  console.log(
    `  ratio adapter(10) / locked ceiling      ${fmt((100 * short.opsPerSec) / locked, 1)} %\n`,
  );
  const empty = await listing(0);
  const full = await listing(1000);
  console.log(`list 20 of ${fmt(SESSIONS)} sessions (newest first):`);
  for (const [name, r] of [
    ['empty transcripts', empty],
    ['1,000-message transcripts', full],
  ]) {
    console.log(
      `  ${name.padEnd(26)} cold ${fmt(r.coldMs, 1)} ms, warm ${fmt(r.warmMs, 2)} ms, folder filter ${fmt(r.filteredMs, 2)} ms  (setup ${fmt(r.setupMs / 1000, 1)} s)`,
    );
  }
  console.log(
    `  ratio warm list (1,000-message) / (empty)  ${fmt(full.warmMs / empty.warmMs, 2)}; cold ${fmt(full.coldMs / empty.coldMs, 2)}  (target ~1: listing never reads transcripts)`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
