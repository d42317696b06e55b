// Benchmark of @sessionkit/file (not a test: it asserts nothing). Run after `build`:
//   pnpm --filter @sessionkit/file bench
// Prints the commit-path targets as ratios against raw appends (`BENCH_ONLY=targets` runs
// only those; see targets.mjs), turn-commit throughput at a short and a long history
// beside the machine's raw append+fsync ceiling, windowed history reads
// (`BENCH_ONLY=windows` runs only those),
// and listing latency over 10,000 sessions with empty and with 1,000-message transcripts.
import { promises as fsp, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { withFileLock } from '@sessionkit/core/adapter';
import { FileStore } from '../dist/index.js';
import { checkpoints } from './checkpoints.mjs';
import { fmt, median, rate } from './figures.mjs';
import { listing as listingTargets } from './listing.mjs';
import { loads } from './loads.mjs';
import { pools } from './pools.mjs';
import { targets } from './targets.mjs';

const COMMITS = Number(process.env.BENCH_COMMITS ?? 1500);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const root = mkdtempSync(join(tmpdir(), 'sk-file-bench-'));
const text = (n) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n);
const KB = text(1000);
const message = (role, i) => ({ role, content: `${i} ${KB}` });

// The four commit measures run interleaved, in ROUNDS chunks each (raw, locked, history
// 10, history 10,000, raw, …), so a burst of load from another tenant of this shared
// machine hits all of them alike; figures are medians over the rounds, and each ratio is
// the median of the per-round ratios.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);

async function rawAppender() {
  const handle = await fsp.open(join(root, 'raw.bin'), 'a', 0o600);
  const buf = Buffer.alloc(2048, 120);
  return {
    step: async () => {
      await handle.write(buf);
      await handle.datasync();
    },
    close: () => handle.close(),
  };
}

// The same append + fdatasync inside core's cross-process lock file (what every commit
// needs for multi-process safety): the ceiling any lock-file-based commit can reach.
async function lockedAppender() {
  const handle = await fsp.open(join(root, 'raw-locked.bin'), 'a', 0o600);
  const buf = Buffer.alloc(2048, 120);
  const lock = join(root, 'raw.lock');
  return {
    step: () =>
      withFileLock(lock, async () => {
        await handle.write(buf);
        await handle.datasync();
      }),
    close: () => handle.close(),
  };
}

async function committer(history) {
  const store = new FileStore({ dir: join(root, `commit-${history}`) });
  const messages = Array.from({ length: history }, (_, i) =>
    message(i % 2 ? 'assistant' : 'user', i),
  );
  await store.create({ id: 's', messages });
  await store.commit('s', { append: [message('user', -1)] }); // warm up
  return {
    step: (i) =>
      store.commit('s', {
        append: [message('user', i), message('assistant', i)],
        increment: { turnCount: 1 },
      }),
    finalMessages: async () => (await store.list({ limit: 1 }))[0].messageCount,
    close: () => store.close(),
  };
}

async function commitRates() {
  const runners = {
    raw: await rawAppender(),
    locked: await lockedAppender(),
    short: await committer(10),
    long: await committer(10_000),
  };
  const chunk = Math.max(1, Math.floor(COMMITS / ROUNDS));
  const rates = { raw: [], locked: [], short: [], long: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, runner] of Object.entries(runners)) {
      rates[name].push(await rate(chunk, runner.step));
    }
  }
  const out = {
    chunk,
    shortFinal: await runners.short.finalMessages(),
    longFinal: await runners.long.finalMessages(),
  };
  for (const runner of Object.values(runners)) await runner.close();
  const perRound = (a, b) => median(rates[a].map((x, i) => x / rates[b][i]));
  return {
    ...out,
    raw: median(rates.raw),
    locked: median(rates.locked),
    short: median(rates.short),
    long: median(rates.long),
    longOverShort: perRound('long', 'short'),
    shortOverRaw: perRound('short', 'raw'),
    longOverRaw: perRound('long', 'raw'),
    shortOverLocked: perRound('short', 'locked'),
  };
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
  const warm = [];
  for (let i = 0; i < 200; i++) {
    const w0 = performance.now();
    await cold.list({ limit: 20 });
    warm.push(performance.now() - w0);
  }
  const warmMs = median(warm);
  const readsBefore = cold.stats.transcriptReads;
  const f0 = performance.now();
  await cold.list({ limit: 20, folder: 'f3', oldestFirst: true });
  const filteredMs = performance.now() - f0;
  if (cold.stats.transcriptReads !== readsBefore || first.length !== 20)
    throw new Error('bad listing');
  await cold.close();
  return { setupMs, coldMs, warmMs, filteredMs };
}

// Windowed reads (issue 9): `{last: 50}` of a 10,000-message session beside a whole
// `loadMessages` of it and beside `{last: 50}` of a 100-message session. Each session is
// one big create plus 50 two-message commits (so the window spans snapshot and log).
async function windows() {
  const dir = join(root, 'windows');
  const writer = new FileStore({ dir, sync: false });
  for (const [id, n] of [
    ['long', 10_000],
    ['short', 100],
  ]) {
    const first = n - 100;
    await writer.create({
      id,
      messages: Array.from({ length: first }, (_, i) => message(i % 2 ? 'assistant' : 'user', i)),
    });
    for (let i = first; i < n; i += 2)
      await writer.commit(id, { append: [message('user', i), message('assistant', i + 1)] });
  }
  await writer.close();
  const store = new FileStore({ dir });
  const measures = {
    longWindow: () => store.loadMessages('long', { last: 50 }),
    longWhole: () => store.loadMessages('long'),
    shortWindow: () => store.loadMessages('short', { last: 50 }),
  };
  const times = { longWindow: [], longWhole: [], shortWindow: [] };
  const reps = Number(process.env.BENCH_WINDOW_REPS ?? 30);
  for (const fn of Object.values(measures)) await fn(); // warm up
  for (let r = 0; r < reps; r++) {
    for (const [name, fn] of Object.entries(measures)) {
      const inner = name === 'longWhole' ? 1 : 20;
      const t0 = performance.now();
      for (let k = 0; k < inner; k++) await fn();
      times[name].push((performance.now() - t0) / inner);
    }
  }
  await store.close();
  const per = (a, b) => median(times[a].map((x, i) => x / times[b][i]));
  return {
    longWindow: median(times.longWindow),
    longWhole: median(times.longWhole),
    shortWindow: median(times.shortWindow),
    wholeOverWindow: per('longWhole', 'longWindow'),
    windowOverShort: per('longWindow', 'shortWindow'),
  };
}

function printWindows(w) {
  console.log('windowed reads (~1 KB messages), medians:');
  console.log(`  {last: 50} of 10,000 messages           ${fmt(w.longWindow, 3)} ms`);
  console.log(`  whole loadMessages of 10,000 messages   ${fmt(w.longWhole, 2)} ms`);
  console.log(`  {last: 50} of 100 messages              ${fmt(w.shortWindow, 3)} ms`);
  console.log(
    `  ratio whole / window (10,000)           ${fmt(w.wholeOverWindow, 1)}x  (target >= 20x)`,
  );
  console.log(
    `  ratio window(10,000) / window(100)      ${fmt(w.windowOverShort, 2)}  (target <= 2)\n`,
  );
}

// BENCH_ONLY=issue29 runs the measures of the pools, listing and loads targets (and the
// bytes of `targets`); BENCH_ONLY=pools, listing, loads or targets one of them;
// BENCH_ONLY=checkpoints the turns across journal checkpoints at 3,000 sessions.
const only = {
  targets: () => targets(root),
  pools: () => pools(root),
  listing: () => listingTargets(root),
  loads: () => loads(root),
  checkpoints: () => checkpoints(root),
  issue29: async () => {
    await pools(root);
    await listingTargets(root);
    await loads(root);
    await targets(root);
  },
}[process.env.BENCH_ONLY ?? ''];
if (only) {
  try {
    console.log(
      `@sessionkit/file benchmark — node ${process.version}, ${process.platform}, temp dir ${tmpdir()}\n`,
    );
    await only();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  process.exit(0);
}

if (process.env.BENCH_ONLY === 'windows') {
  try {
    printWindows(await windows());
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  process.exit(0);
}

try {
  console.log(
    `@sessionkit/file benchmark — node ${process.version}, ${process.platform}, temp dir ${tmpdir()}`,
  );
  console.log(`commits per measure: ${COMMITS}; sessions for listing: ${SESSIONS}\n`);
  await pools(root);
  await listingTargets(root);
  await loads(root);
  await targets(root);
  const c = await commitRates();
  console.log(
    `turn commit (append user + assistant, ~1 KB each, fsync per commit), ${ROUNDS} interleaved rounds of ${c.chunk}, medians:`,
  );
  console.log(`  raw ceiling: 2 KB append + fdatasync   ${fmt(c.raw)} ops/s`);
  console.log(
    `  same inside core withFileLock           ${fmt(c.locked)} ops/s  (ceiling for any locked commit)`,
  );
  console.log(
    `  commit at history 10                    ${fmt(c.short)} ops/s  (history ${c.shortFinal} at the end)`,
  );
  console.log(
    `  commit at history 10,000                ${fmt(c.long)} ops/s  (history ${c.longFinal} at the end)`,
  );
  console.log(
    `  ratio commit(10,000) / commit(10)       ${fmt(c.longOverShort, 2)}  (target >= 0.8)`,
  );
  console.log(
    `  ratio adapter(10) / raw                 ${fmt(100 * c.shortOverRaw, 1)} %  (target >= 50 %)`,
  );
  console.log(`  ratio adapter(10,000) / raw             ${fmt(100 * c.longOverRaw, 1)} %`);
  console.log(`  ratio adapter(10) / locked ceiling      ${fmt(100 * c.shortOverLocked, 1)} %\n`);
  printWindows(await windows());
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
