// The benchmark (not a test): turn throughput at histories 10 and 10,000 with 1 and 8
// writers beside a raw Lua turn of the same shape, a 20 MB load beside JSON.parse of its
// bytes, list 20 of 10,000 and search over 10,000 sessions × 100 messages. Runs on the
// standalone server ($SESSIONKIT_TEST_REDIS_URL, default redis://127.0.0.1:6379) and on a
// three-master Cluster it starts itself. BENCH_SECONDS (default 2) per throughput figure,
// BENCH_SESSIONS (default 10000), BENCH_TARGETS (default "standalone,cluster").
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { startCluster } from './cluster.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${packageDir}/dist/index.js`)) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: packageDir,
  });
}
const { RedisStore, KeySpace } = await import('../dist/index.js');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const TARGETS = (process.env.BENCH_TARGETS ?? 'standalone,cluster').split(',');
const URL_ = process.env.SESSIONKIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const HIT = Math.floor(SESSIONS / 2);
const message = (i) => ({
  role: i % 2 ? 'assistant' : 'user',
  content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(3)}`,
});

/**
 * The raw turn: the same keys and the same work as the store's write script (the message,
 * its search text, the header, the write version, the listing order), nothing else.
 */
const RAW_TURN = `
local v = redis.call('HGET', KEYS[1], 'w')
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('HSET', KEYS[1], 'h', ARGV[3], 'r', ARGV[4], 'n', redis.call('LLEN', KEYS[2]), 'o', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'w', 1)
if #KEYS >= 11 then redis.call('ZADD', KEYS[11], 'GT', ARGV[4], ARGV[5]) end
return v
`;

async function fill(store, id, count) {
  await store.create({ id, title: id });
  for (let i = 0; i < count; i += 1000) {
    await store.commit(id, {
      append: Array.from({ length: Math.min(1000, count - i) }, (_, j) => message(i + j)),
    });
  }
}

async function throughput(writers, turn) {
  let ops = 0;
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (Date.now() < end) {
        await turn(w);
        ops++;
      }
    }),
  );
  return ops / SECONDS;
}

async function commitFigures(client, prefix, cluster) {
  const store = new RedisStore({ client, prefix: `${prefix}turn:` });
  const keys = new KeySpace(`${prefix}turn:`);
  const rows = [];
  for (const history of [10, 10_000]) {
    for (const writers of [1, 8]) {
      const ids = Array.from({ length: writers }, (_, w) => `h${history}-w${writers}-${w}`);
      for (const id of ids) await fill(store, id, history);
      const rawIds = ids.map((id) => `${id}-raw`);
      for (const id of rawIds) await fill(store, id, history);
      const header = JSON.stringify({ v: 1, title: 'x'.repeat(40) });
      const sha = await client.script('LOAD', RAW_TURN).catch(async () => null);
      const raw = async (w) => {
        const id = rawIds[w];
        const k = keys.sessionKeyList(id);
        if (!cluster) k.push(keys.order);
        const m = JSON.stringify(message(1));
        const args = [m, m.toLowerCase(), header, String(Date.now()), id];
        if (sha)
          await client
            .evalsha(sha, k.length, ...k, ...args)
            .catch(() => client.eval(RAW_TURN, k.length, ...k, ...args));
        else await client.eval(RAW_TURN, k.length, ...k, ...args);
      };
      const turn = (w) =>
        store.commit(ids[w], { append: [message(1)], increment: { tokenCount: 10 } });
      // Interleaved rounds, best of each: the machine's other load hits both alike.
      let rawOps = 0;
      let commitOps = 0;
      await throughput(writers, turn); // warm-up (JIT, connections, script cache)
      for (let round = 0; round < 3; round++) {
        rawOps = Math.max(rawOps, await throughput(writers, raw));
        commitOps = Math.max(commitOps, await throughput(writers, turn));
      }
      rows.push({ history, writers, commitOps, rawOps });
    }
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

async function listFigures(client, prefix) {
  const store = new RedisStore({ client, prefix: `${prefix}list:` });
  const started = Date.now();
  for (let i = 0; i < SESSIONS; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, SESSIONS - i) }, (_, j) => {
        const n = i + j;
        return store.create({
          id: `s${String(n).padStart(6, '0')}`,
          title: `session ${n}`,
          folder: `f${n % 10}`,
          messages: Array.from({ length: 100 }, (_, m) =>
            message(m + (n === HIT && m === 50 ? 1e6 : 0)),
          ),
        });
      }),
    );
  }
  const fillSeconds = (Date.now() - started) / 1000;
  const time = async (fn, n) => {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn();
    return (performance.now() - t) / n;
  };
  const list20 = await time(() => store.list({ limit: 20 }), 50);
  const folder20 = await time(() => store.list({ limit: 20, folder: 'f3' }), 20);
  const hits = await store.list({ query: 'MESSAGE 1000050' });
  const searchMs = await time(() => store.list({ query: 'message 1000050' }), 3);
  const missMs = await time(() => store.list({ query: 'no such text anywhere' }), 3);
  await store.close();
  return { fillSeconds, list20, folder20, searchMs, missMs, hits: hits.map((s) => s.id) };
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

function print(target, turns, load, list) {
  console.log(`\n## ${target}\n`);
  console.log('| history | writers | commit ops/s | raw Lua turn ops/s | commit / raw |');
  console.log('|---:|---:|---:|---:|---:|');
  for (const r of turns) {
    console.log(
      `| ${r.history} | ${r.writers} | ${r.commitOps.toFixed(0)} | ${r.rawOps.toFixed(0)} | ${((100 * r.commitOps) / r.rawOps).toFixed(0)} % |`,
    );
  }
  for (const writers of [1, 8]) {
    const at = (h) => turns.find((r) => r.history === h && r.writers === writers).commitOps;
    console.log(
      `\ncommit(10,000) / commit(10), ${writers} writer(s): ${(at(10_000) / at(10)).toFixed(2)}`,
    );
  }
  console.log(
    `\nload of a ${load.mb.toFixed(1)} MB transcript: ${load.loadMs.toFixed(0)} ms; JSON.parse of its bytes: ${load.parseMs.toFixed(0)} ms (${(load.loadMs / load.parseMs).toFixed(1)}×)`,
  );
  console.log(`\n${SESSIONS} sessions × 100 messages written in ${list.fillSeconds.toFixed(1)} s`);
  console.log(
    `list 20 of ${SESSIONS}: ${list.list20.toFixed(1)} ms; with a folder filter (1 in 10 match): ${list.folder20.toFixed(1)} ms`,
  );
  console.log(
    `search (one hit, ${list.hits.join(', ')}): ${list.searchMs.toFixed(0)} ms; search without a hit: ${list.missMs.toFixed(0)} ms`,
  );
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
    const turns = await commitFigures(client, prefix, target === 'cluster');
    const load = await loadFigure(client, prefix);
    const list = await listFigures(client, prefix);
    print(target, turns, load, list);
  } finally {
    await cleanup(client, prefix, target === 'cluster').catch(() => {});
    client.disconnect();
    cluster?.stop();
  }
}
process.exit(0);
