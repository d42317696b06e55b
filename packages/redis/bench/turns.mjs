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
 * Live sessions per history, written round robin: how a server hosting many conversations
 * loads a store (each session's keys, and the client's state of it, go cold between its
 * turns), not one warm session.
 */
export const LIVE_SESSIONS = { 10: 1000, 1000: 50, 10000: 10 };

/**
 * `turns` store turns and as many raw turns, each line round robin over its own
 * `LIVE_SESSIONS[history]` sessions of `history` messages, alternated turn by turn (which
 * goes first alternates too). Returns per-turn means.
 */
export async function turnFigures({ store, client, keys, cluster, history, turns, tag }) {
  const live = LIVE_SESSIONS[history] ?? 10;
  const ids = [];
  const raws = [];
  for (let n = 0; n < live; n++) {
    const id = `${tag}-h${history}-${n}`;
    const rawId = `${id}-raw`;
    await fill(store, id, history);
    await fill(store, rawId, history);
    const rawKeys = keys.sessionKeyList(rawId);
    if (!cluster) rawKeys.push(keys.order);
    const stored = await client.hget(keys.session(rawId).meta, 'h');
    const header = stored.replace(/"title":"[^"]*"/, `"title":"${'x'.repeat(40)}"`);
    const version = await client.hget(keys.session(rawId).meta, 'w');
    ids.push(id);
    raws.push({ rawId, rawKeys, header, version });
  }
  // On a Cluster every master must know the script (SCRIPT LOAD goes to one node),
  // once the fills have connected the client to all of them.
  let sha;
  for (const node of cluster ? client.nodes('master') : [client]) {
    sha = await node.script('LOAD', RAW_TURN);
  }
  let rawTurn = 0;
  const raw = async () => {
    const r = raws[rawTurn++ % live];
    const m = JSON.stringify(message(1));
    const args = [m, m.toLowerCase(), r.header, r.version, String(Date.now()), r.rawId];
    const reply = await client.evalsha(sha, r.rawKeys.length, ...r.rawKeys, ...args);
    r.version = String(Array.isArray(reply) ? reply[1] : reply);
  };
  let storeTurn = 0;
  const turn = () =>
    store.commit(ids[storeTurn++ % live], {
      append: [message(1)],
      increment: { tokenCount: 10 },
    });
  for (let i = 0; i < Math.max(200, 2 * live); i++) {
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
  return { history, live, store: per('store'), raw: per('raw') };
}
