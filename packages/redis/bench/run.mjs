// The benchmark (not a test). Per target (the standalone server at
// $SESSIONKIT_TEST_REDIS_URL, default redis://127.0.0.1:6379, and a three-master Cluster it
// starts itself): a turn beside a raw Lua turn of the same bytes at history 10, 1,000 and
// 10,000 (each line round robin over its own live sessions: 1,000, 50 and 10), alternated
// turn by turn, with each line's client CPU per turn; bytes stored per
// message; a 20 MB load beside JSON.parse of its bytes; list 20 of BENCH_SESSIONS
// (default 100,000) without and with a folder, status or parent filter; search over them.
// BENCH_TURNS (default 3000) turns per line and history, BENCH_TARGETS (default
// "standalone,cluster"), BENCH_PARTS (default "turns,bytes,load,list": the parts to run).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { bytesFigures } from './bytes.mjs';
import { startCluster } from './cluster.mjs';
import { listFigures } from './listing.mjs';
import { turnFigures } from './turns.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${packageDir}/dist/index.js`)) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: packageDir,
  });
}
const { RedisStore, KeySpace } = await import('../dist/index.js');

const TURNS = Number(process.env.BENCH_TURNS ?? 3000);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100_000);
const TARGETS = (process.env.BENCH_TARGETS ?? 'standalone,cluster').split(',');
const URL_ = process.env.SESSIONKIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PARTS = new Set((process.env.BENCH_PARTS ?? 'turns,bytes,load,list').split(','));
const HISTORIES = [10, 1_000, 10_000];

async function commitFigures(client, prefix, cluster) {
  const store = new RedisStore({ client, prefix: `${prefix}turn:` });
  const keys = new KeySpace(`${prefix}turn:`);
  const rows = [];
  for (const history of HISTORIES) {
    rows.push(await turnFigures({ store, client, keys, cluster, history, turns: TURNS, tag: 't' }));
  }
  await store.close();
  return rows;
}

async function loadFigure(client, prefix) {
  const store = new RedisStore({ client, prefix: `${prefix}load:` });
  const big = { role: 'tool', content: 'x'.repeat(10_000) };
  const messages = Array.from({ length: 2_000 }, (_, i) => ({ ...big, name: `m${i}` }));
  await store.create({ id: 'big' });
  for (let i = 0; i < messages.length; i += 200)
    await store.commit('big', { append: messages.slice(i, i + 200) });
  const bytes = Buffer.from(JSON.stringify(messages));
  const time = async (fn, n = 5) => {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn();
    return (performance.now() - t) / n;
  };
  const loadMs = await time(() => store.load('big'));
  const parseMs = await time(() => JSON.parse(bytes.toString('utf8')));
  await store.close();
  return { mb: bytes.length / 1e6, loadMs, parseMs };
}

async function cleanup(client, prefix, cluster) {
  const nodes = cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      for (const key of keys) await node.unlink(key);
      cursor = next;
    } while (cursor !== '0');
  }
}

const pct = (a, b) => `${((100 * a) / b).toFixed(0)} %`;

function print(target, turns, bytes, load, list) {
  console.log(`\n## ${target}\n`);
  if (turns) printTurns(turns);
  if (bytes) {
    console.log(
      `\nbytes per message (${bytes.messages} messages, MEMORY USAGE): ${(bytes.storedBytes / bytes.jsonBytes).toFixed(2)}× the JSON (${bytes.jsonBytes} JSON bytes, ${bytes.storedBytes} stored: ${bytes.perKey.map(([k, b]) => `${k} ${b}`).join(', ')})`,
    );
  }
  if (load) {
    console.log(
      `load of a ${load.mb.toFixed(1)} MB transcript: ${load.loadMs.toFixed(0)} ms; JSON.parse of its bytes: ${load.parseMs.toFixed(0)} ms (${(load.loadMs / load.parseMs).toFixed(1)}×)`,
    );
  }
  if (list) printList(list);
}

function printTurns(turns) {
  console.log(
    '| history | live sessions | commit ops/s | raw ops/s | commit / raw | commit CPU µs/turn | raw CPU µs/turn | CPU commit / raw |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of turns) {
    const s = r.store;
    const w = r.raw;
    console.log(
      `| ${r.history} | ${r.live} | ${s.opsPerSecond.toFixed(0)} | ${w.opsPerSecond.toFixed(0)} | ${pct(s.opsPerSecond, w.opsPerSecond)} | ${s.cpuMicros.toFixed(0)} | ${w.cpuMicros.toFixed(0)} | ${(s.cpuMicros / w.cpuMicros).toFixed(2)} |`,
    );
  }
}

function printList(list) {
  console.log(`${list.sessions} sessions written in ${list.fillSeconds.toFixed(1)} s`);
  const ms = (t) => `${t.median.toFixed(2)} ms (mean ${t.mean.toFixed(2)})`;
  console.log(
    `list 20 of ${list.sessions}, median of 40 calls: ${ms(list.list20)}; folder filter ${ms(list.folder20)}; status filter ${ms(list.status20)}; parent filter ${ms(list.parent20)} (each 1 in 10)`,
  );
  console.log(`search (one hit, ${list.hits.join(', ')}): ${list.searchMs.toFixed(0)} ms`);
}

// Interrupted (Ctrl-C, a timeout's SIGTERM): delete what this run wrote before exiting.
let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    if (current) await cleanup(current.client, current.prefix, current.cluster).catch(() => {});
    process.exit(130);
  });
}

for (const target of TARGETS) {
  const prefix = `skbench:${process.pid}:`;
  let cluster;
  let client;
  if (target === 'cluster') {
    cluster = await startCluster();
    client = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  } else {
    client = new Redis(URL_);
  }
  client.on('error', () => {});
  current = { client, prefix, cluster: target === 'cluster' };
  try {
    const turns = PARTS.has('turns')
      ? await commitFigures(client, prefix, target === 'cluster')
      : undefined;
    let bytes;
    if (PARTS.has('bytes')) {
      const bytesStore = new RedisStore({ client, prefix: `${prefix}bytes:` });
      bytes = await bytesFigures({
        store: bytesStore,
        client,
        keys: new KeySpace(`${prefix}bytes:`),
      });
      await bytesStore.close();
    }
    const load = PARTS.has('load') ? await loadFigure(client, prefix) : undefined;
    let list;
    if (PARTS.has('list')) {
      const listStore = new RedisStore({ client, prefix: `${prefix}list:` });
      list = await listFigures({ store: listStore, sessions: SESSIONS });
      await listStore.close();
    }
    print(target, turns, bytes, load, list);
  } finally {
    await cleanup(client, prefix, target === 'cluster').catch(() => {});
    client.disconnect();
    cluster?.stop();
  }
}
process.exit(0);
