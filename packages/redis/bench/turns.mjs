// The turn figures: a store's commit beside a raw Lua turn, alternated turn by turn in one
// process (the machine's other load hits both alike), at several history lengths, with
// each turn's wall time and client CPU (`process.cpuUsage()`).

/**
 * The raw turn: a revision check, RPUSH of the message and of its search text, the header
 * stored and the write version incremented, the listing order on standalone Redis — the
 * same bytes as the store's turn in one script and one round trip, with no ledger,
 * operation ids or plan.
 */
export const RAW_TURN = `
local v = redis.call('HGET', KEYS[1], 'w')
if v ~= ARGV[4] then return {0, v} end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('HSET', KEYS[1], 'h', ARGV[3])
if #KEYS >= 11 then redis.call('ZADD', KEYS[11], 'GT', ARGV[5], ARGV[6]) end
return redis.call('HINCRBY', KEYS[1], 'w', 1)
`;

export const message = (i) => ({
  role: i % 2 ? 'assistant' : 'user',
  content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(3)}`,
});

/** Fills session `id` with `count` messages, 1,000 per commit. */
export async function fill(store, id, count) {
  await store.create({ id, title: id });
  for (let i = 0; i < count; i += 1000) {
    await store.commit(id, {
      append: Array.from({ length: Math.min(1000, count - i) }, (_, j) => message(i + j)),
    });
  }
}

/** Wall time (ms) and client CPU (µs) of one call. */
async function measured(fn) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await fn();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpu: used.user + used.system };
}

/**
 * `turns` store turns and as many raw turns on sessions of `history` messages, alternated
 * turn by turn (which goes first alternates too). Returns per-turn means.
 */
export async function turnFigures({ store, client, keys, cluster, history, turns, tag }) {
  const id = `${tag}-h${history}`;
  const rawId = `${id}-raw`;
  await fill(store, id, history);
  await fill(store, rawId, history);
  const rawKeys = keys.sessionKeyList(rawId);
  if (!cluster) rawKeys.push(keys.order);
  const stored = await client.hget(keys.session(rawId).meta, 'h');
  const header = stored.replace(/"title":"[^"]*"/, `"title":"${'x'.repeat(40)}"`);
  let version = await client.hget(keys.session(rawId).meta, 'w');
  // On a Cluster every master must know the script (SCRIPT LOAD goes to one node).
  let sha;
  for (const node of cluster ? client.nodes('master') : [client]) {
    sha = await node.script('LOAD', RAW_TURN);
  }
  const raw = async () => {
    const m = JSON.stringify(message(1));
    const args = [m, m.toLowerCase(), header, version, String(Date.now()), rawId];
    const reply = await client.evalsha(sha, rawKeys.length, ...rawKeys, ...args);
    version = String(Array.isArray(reply) ? reply[1] : reply);
  };
  const turn = () => store.commit(id, { append: [message(1)], increment: { tokenCount: 10 } });
  for (let i = 0; i < 200; i++) {
    await turn();
    await raw();
  }
  const sum = { store: { ms: 0, cpu: 0 }, raw: { ms: 0, cpu: 0 } };
  const add = (line, m) => {
    sum[line].ms += m.ms;
    sum[line].cpu += m.cpu;
  };
  for (let i = 0; i < turns; i++) {
    if (i % 2 === 0) {
      add('store', await measured(turn));
      add('raw', await measured(raw));
    } else {
      add('raw', await measured(raw));
      add('store', await measured(turn));
    }
  }
  const per = (line) => ({
    opsPerSecond: (1000 * turns) / sum[line].ms,
    cpuMicros: sum[line].cpu / turns,
  });
  return { history, store: per('store'), raw: per('raw') };
}
