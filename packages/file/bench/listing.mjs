// Listing that does not grow with the store (issue 29): 1,000, 10,000 and 100,000 sessions
// (10 folders, 3 statuses, every 10th a branch of an earlier one), created with
// `sync: false` (creates per second), then `list` of 20 with no filter, each filter, `after`
// and a cursor (warm: medians of 30 calls each), a new store's open + first page, on the
// file store and on the memory store. Asserts nothing.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fmt, median } from './figures.mjs';

const { FileStore } = await import(process.env.BENCH_DIST ?? '../dist/index.js');
const memoryDist = process.env.BENCH_MEMORY_DIST ?? '../../memory/dist/index.js';

const BASE = Date.UTC(2026, 0, 1);
const sessionOf = (i) => {
  const s = {
    id: `s${String(i).padStart(6, '0')}`,
    title: `session ${i}`,
    folder: `/work/project-${i % 10}`,
    status: ['active', 'done', 'waiting'][i % 3],
    updatedAt: new Date(BASE + i * 1000),
    messages: [{ role: 'user', content: `hello ${i}` }],
  };
  if (i % 10 === 9) s.parentId = `s${String(i - 7).padStart(6, '0')}`;
  return s;
};

/** What each listing is asked (the cursor and bounds from the middle of the store). */
function queries(n) {
  const mid = sessionOf(Math.floor(n / 2));
  return {
    'no filter': {},
    folder: { folder: '/work/project-3' },
    status: { status: 'waiting' },
    parentId: { parentId: sessionOf(2).id },
    after: { after: new Date(mid.updatedAt.getTime()), oldestFirst: true },
    cursor: { startAfter: { updatedAt: mid.updatedAt, id: mid.id } },
  };
}

async function timeList(store, options, reps = 30) {
  const times = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await store.list({ limit: 20, ...options });
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function measure(label, open, n, reopen) {
  const store = open();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await store.create(sessionOf(i));
  const createRate = (n * 1000) / (performance.now() - t0);
  await store.list({ limit: 1 });
  const line = [];
  for (const [name, options] of Object.entries(queries(n)))
    line.push(`${name} ${fmt(await timeList(store, options), 3)}`);
  await store.close();
  let openMs;
  if (reopen) {
    const opens = [];
    for (let k = 0; k < 3; k++) {
      const t1 = performance.now();
      const again = reopen();
      await again.list({ limit: 20 });
      opens.push(performance.now() - t1);
      await again.close();
    }
    openMs = median(opens);
  }
  console.log(
    `  ${label} ${fmt(n).padStart(7)}: list 20 (ms) ${line.join(', ')}; creates ${fmt(createRate)}/s${openMs === undefined ? '' : `; open + first page ${fmt(openMs, 1)} ms`}`,
  );
}

/** Runs the listing measures at each size and prints them. */
export async function listing(root) {
  const sizes = (process.env.BENCH_LIST_SIZES ?? '1000,10000,100000').split(',').map(Number);
  console.log(
    'listing (targets: list <= 1 ms at 100,000; open + first page <= 150 ms; creates >= 2,000/s):',
  );
  let MemoryStore;
  try {
    ({ MemoryStore } = await import(memoryDist));
  } catch {
    console.log('  memory store not measured (build @sessionkit/memory first)');
  }
  for (const n of sizes) {
    const dir = join(root, `listing-${n}`);
    await measure(
      'file  ',
      () => new FileStore({ dir, sync: false }),
      n,
      () => new FileStore({ dir }),
    );
    if (MemoryStore) await measure('memory', () => new MemoryStore(), n);
  }
  console.log('');
}
