// Loads and bytes (issue 29): a whole `load` of a 1,000-message conversation (500 turns
// committed one by one, so it holds a snapshot and a log) against reading and parsing the
// same messages as a raw JSON-lines file, alternated (medians, per-round ratio).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fmt, median } from './figures.mjs';
import { turnBytes, turnOf } from './turns.mjs';

const { FileStore } = await import(process.env.BENCH_DIST ?? '../dist/index.js');

export async function loads(root) {
  const dir = join(root, 'loads');
  mkdirSync(dir, { recursive: true });
  const store = new FileStore({ dir: join(dir, 'store'), sync: false });
  await store.create({ id: 'c' });
  const raw = [];
  for (let t = 0; t < 500; t++) {
    await store.commit('c', { append: turnOf(t) });
    raw.push(turnBytes(t));
  }
  const rawPath = join(dir, 'raw.jsonl');
  writeFileSync(rawPath, Buffer.concat(raw));
  const readRaw = () => {
    const messages = [];
    for (const line of readFileSync(rawPath, 'utf8').split('\n'))
      if (line) for (const m of JSON.parse(line)) messages.push(m);
    return messages;
  };
  const rawTimes = [];
  const storeTimes = [];
  for (let r = 0; r < 40; r++) {
    let t0 = performance.now();
    if (readRaw().length !== 1000) throw new Error('raw read');
    rawTimes.push(performance.now() - t0);
    t0 = performance.now();
    if ((await store.load('c')).messages.length !== 1000) throw new Error('load');
    storeTimes.push(performance.now() - t0);
  }
  await store.close();
  console.log('loads (1,000 messages of ~1 KB), 40 alternated rounds, medians:');
  console.log(
    `  read + parse the raw JSON-lines file                   ${fmt(median(rawTimes), 2)} ms`,
  );
  console.log(
    `  load()                                                 ${fmt(median(storeTimes), 2)} ms`,
  );
  console.log(
    `  ratio load / raw                                       ${fmt(median(storeTimes.map((x, i) => x / rawTimes[i])), 2)}x  (target <= 1.3x)\n`,
  );
}
