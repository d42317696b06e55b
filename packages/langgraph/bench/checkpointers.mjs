#!/usr/bin/env node
// pnpm --filter @sessionkit/langgraph bench: LangGraph's PostgresSaver and SqliteSaver beside
// SessionKitSaver on the PostgreSQL and file stores, in one run, on the same compiled
// StateGraph(MessagesAnnotation) whose one node returns two ~1 KB messages per invoke:
// invokes/s with 10, 1,000 and 5,000 messages already in the thread (the three threads,
// and the same three on an in-process saver that stores nothing, measured in interleaved
// rounds: a saver's own cost per invoke is its time less that one's), and bytes per
// thread after 200 invokes (and, for SessionKitSaver, the JSON of its records: what the
// saver writes, before the store's own layout). Needs the test PostgreSQL
// (SESSIONKIT_TEST_POSTGRES_URL). Prints a Markdown table. `--quick` measures fewer invokes.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { BaseCheckpointSaver, copyCheckpoint } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { FileStore } from '@sessionkit/file';
import { PostgresStore } from '@sessionkit/postgres';
import pg from 'pg';
import { SessionKitSaver } from '../dist/index.js';
import { loadSqliteSaver } from './sqlite-saver.mjs';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const url = process.env.SESSIONKIT_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SIZES = [10, 1000, 5000];
const INVOKES = values.quick ? 5 : 20;
const BYTES_TURNS = 200;
// Bytes are measured over this many threads written round robin, less what the empty store
// takes: a store's fixed cost (its schema's empty tables, a folder's index) and its slack
// (space a later write reuses, an index not yet compacted) are shared by a store's threads,
// not paid by each, so one thread alone would charge it all to that thread.
const BYTES_THREADS = Number(process.env.BENCH_BYTES_THREADS ?? 10);
const pool = new pg.Pool({ connectionString: url, max: 4 });
let schemas = 0;

function graphOn(checkpointer) {
  let turn = 0;
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', () => {
      turn += 1;
      const text = `reply ${turn} `.padEnd(1000, 'x');
      return { messages: [new AIMessage(text), new AIMessage(`${text}!`)] };
    })
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer });
}

/** A thread that already holds `n` messages (written in one invoke, as an import would). */
async function threadWith(graph, threadId, n) {
  const messages = Array.from(
    { length: n - 2 },
    (_, i) => new HumanMessage(`earlier ${i} `.padEnd(1000, 'y')),
  );
  await graph.invoke({ messages }, { configurable: { thread_id: threadId } });
}

/**
 * Invokes/s on each of `threads`, measured in interleaved rounds: each round runs one
 * invoke on every thread, in alternating order, so the shared machine's load, which
 * changes from second to second, weighs on every thread alike. At least INVOKES rounds,
 * and more (up to 3×) until every thread but the raw line's has had 2 s. Returns each
 * thread's invokes/s and its time per round (for medians across rounds, which a burst of
 * load in one round does not move).
 */
async function rates(threads) {
  const configs = threads.map(({ threadId }) => ({ configurable: { thread_id: threadId } }));
  // Warm: each saver has read its thread once.
  for (const [i, { graph }] of threads.entries()) await graph.invoke({ messages: [] }, configs[i]);
  const rounds = threads.map(() => []);
  const total = (i) => rounds[i].reduce((a, b) => a + b, 0);
  for (let round = 0; ; round++) {
    const own = threads.map((_, i) => i).filter((i) => threads[i].line !== 'raw');
    const enough = Math.min(...own.map(total)) >= 2000;
    if (round >= INVOKES && (round >= 3 * INVOKES || enough)) break;
    const order = threads.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const start = performance.now();
      await threads[i].graph.invoke({ messages: [] }, configs[i]);
      rounds[i].push(performance.now() - start);
    }
  }
  return threads.map((_, i) => ({ rate: rounds[i].length / (total(i) / 1000), ms: rounds[i] }));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function schemaBytes(schema) {
  const r = await pool.query(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
    [schema],
  );
  return Number(r.rows[0].bytes);
}

function folderBytes(dir) {
  let total = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, name.name);
    total += name.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}

/**
 * LangGraph's own floor: a saver that keeps the checkpoint objects in memory as given (no
 * serialization, no storage), so its 5,000 ÷ 10 is what the graph itself (the messages
 * reducer, LangGraph's loop) allows any checkpointer. Only what this graph needs.
 */
class InProcessSaver extends BaseCheckpointSaver {
  #tuples = new Map();
  #writes = new Map();
  #latest = new Map();

  async getTuple(config) {
    const { thread_id } = config.configurable;
    const tuple = this.#tuples.get(
      config.configurable.checkpoint_id ?? this.#latest.get(thread_id),
    );
    if (tuple === undefined) return undefined;
    const pendingWrites = this.#writes.get(tuple.checkpoint.id) ?? [];
    return { ...tuple, checkpoint: copyCheckpoint(tuple.checkpoint), pendingWrites };
  }

  async *list() {}

  async put(config, checkpoint, metadata) {
    const configurable = { ...config.configurable, checkpoint_id: checkpoint.id };
    this.#latest.set(configurable.thread_id, checkpoint.id);
    const tuple = { config: { configurable }, checkpoint: copyCheckpoint(checkpoint), metadata };
    if (config.configurable.checkpoint_id !== undefined) tuple.parentConfig = config;
    this.#tuples.set(checkpoint.id, tuple);
    return { configurable };
  }

  async putWrites(config, writes, taskId) {
    const id = config.configurable.checkpoint_id;
    const list = this.#writes.get(id) ?? [];
    for (const [channel, value] of writes) list.push([taskId, channel, value]);
    this.#writes.set(id, list);
  }

  async deleteThread() {}
}

const contenders = [
  {
    name: 'reference: LangGraph with an in-process saver that stores nothing',
    async open() {
      return { saver: new InProcessSaver(), bytes: async () => undefined, close: async () => {} };
    },
  },
  {
    name: 'PostgresSaver (@langchain/langgraph-checkpoint-postgres 1.0.5)',
    async open() {
      const schema = `lg_bench_pg_${process.pid}_${++schemas}`;
      await pool.query(`CREATE SCHEMA "${schema}"`);
      const saver = new PostgresSaver(pool, undefined, { schema });
      await saver.setup();
      return {
        saver,
        bytes: () => schemaBytes(schema),
        close: () => pool.query(`DROP SCHEMA "${schema}" CASCADE`),
      };
    },
  },
  {
    name: 'SessionKitSaver on @sessionkit/postgres',
    async open() {
      const schema = `lg_bench_sk_${process.pid}_${++schemas}`;
      const store = await PostgresStore.fromPool(pool, { schema });
      return {
        saver: new SessionKitSaver(store),
        bytes: () => schemaBytes(schema),
        close: async () => {
          await store.close();
          await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
        },
      };
    },
  },
  {
    name: 'SessionKitSaver on @sessionkit/file',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'lg-bench-'));
      const store = new FileStore({ dir });
      return {
        saver: new SessionKitSaver(store),
        bytes: async () => folderBytes(dir),
        // Closed: the commit journal (a store's, of a fixed size, removed by close()) is
        // not the threads'.
        restBytes: async () => {
          await store.close();
          return folderBytes(dir);
        },
        close: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'SqliteSaver (@langchain/langgraph-checkpoint-sqlite 1.0.4, a file)',
    async open() {
      const SqliteSaver = await loadSqliteSaver();
      const dir = mkdtempSync(join(tmpdir(), 'lg-bench-sqlite-'));
      const saver = SqliteSaver.fromConnString(join(dir, 'checkpoints.db'));
      return {
        saver,
        // The database file and its WAL, as they are after the run.
        bytes: async () => folderBytes(dir),
        // Closed: SQLite checkpoints the WAL into the database file and removes it.
        restBytes: async () => {
          if (saver.db.open) saver.db.close();
          return folderBytes(dir);
        },
        close: async () => {
          if (saver.db.open) saver.db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

/**
 * Bytes per thread on `c`: BYTES_THREADS threads of BYTES_TURNS invokes each, written round
 * robin, less the store's bytes before the first invoke; and, for SessionKitSaver, the JSON
 * of a thread's records (the mean over the threads). Sets `messagesJson` (one thread's
 * messages' own JSON).
 */
async function threadBytes(c) {
  const opened = await c.open();
  try {
    const graph = graphOn(opened.saver);
    const configs = Array.from({ length: BYTES_THREADS }, (_, t) => ({
      configurable: { thread_id: `bytes-${t}` },
    }));
    const empty = await opened.bytes();
    for (let i = 0; i < BYTES_TURNS; i++)
      for (const config of configs) await graph.invoke({ messages: [] }, config);
    const state = await graph.getState(configs[0]);
    messagesJson = JSON.stringify(state.values.messages).length;
    const after = await opened.bytes();
    let records = 0;
    for (const config of configs) {
      const r = await recordBytes(opened.saver, config.configurable.thread_id);
      if (r !== undefined) records += r;
    }
    const rest = opened.restBytes === undefined ? after : await opened.restBytes();
    const perThread = (b) => (b === undefined ? undefined : (b - empty) / BYTES_THREADS);
    return {
      bytes: perThread(after),
      restBytes: perThread(rest),
      records: opened.saver instanceof SessionKitSaver ? records / BYTES_THREADS : undefined,
    };
  } finally {
    await opened.close();
  }
}

/** The JSON of a SessionKitSaver thread's records (every namespace session). */
async function recordBytes(saver, threadId) {
  if (!(saver instanceof SessionKitSaver)) return undefined;
  const session = await saver.store.load(saver.sessionIdFor(threadId));
  return session.messages.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
}

// Warm-up, not measured: the first figures of a cold process would include compiling
// LangGraph's and the messages' code paths, which would flatter every 5,000 ÷ 10 after it.
{
  const graph = graphOn(new InProcessSaver());
  await threadWith(graph, 'warm', 1000);
  for (let i = 0; i < 3; i++) await rates([{ graph, threadId: 'warm' }]);
}

/**
 * Threads holding each of SIZES messages on `c`: [threads, close]. `line` names them in
 * the interleaved rounds.
 */
async function sizedThreads(c, line) {
  const opened = [];
  const threads = [];
  try {
    for (const n of SIZES) {
      opened.push(await c.open());
      const graph = graphOn(opened.at(-1).saver);
      await threadWith(graph, `rate-${n}`, n);
      threads.push({ graph, threadId: `rate-${n}`, line });
    }
  } catch (e) {
    for (const o of opened) await o.close();
    throw e;
  }
  return [threads, async () => Promise.all(opened.map((o) => o.close()))];
}

const reference = contenders[0];
const rows = [];
let messagesJson = 0;
for (const c of contenders) {
  const row = { name: c.name, rates: [] };
  // A saver's rounds interleave the reference's threads (the raw line: LangGraph alone)
  // with its own, so its own cost per invoke (its time less the reference's, per size) is
  // measured under the same load.
  const [own, closeOwn] = await sizedThreads(c, 'own');
  const [raw, closeRaw] =
    c === reference ? [[], async () => {}] : await sizedThreads(reference, 'raw');
  try {
    const lines = SIZES.flatMap((_, i) => (raw.length === 0 ? [own[i]] : [raw[i], own[i]]));
    const measured = await rates(lines);
    const ownOf = measured.filter((_, i) => lines[i].line === 'own');
    const rawOf = measured.filter((_, i) => lines[i].line === 'raw');
    row.rates = ownOf.map((m) => m.rate);
    // 5,000 ÷ 10 as the median of each round's own ratio (the two invokes ran moments
    // apart), and a saver's own ms per invoke as the median of each round's difference.
    const [small, , large] = ownOf;
    row.ratio = median(small.ms.map((t, k) => t / large.ms[k]));
    if (rawOf.length > 0)
      row.ownMs = ownOf.map((m, i) => median(m.ms.map((t, k) => t - rawOf[i].ms[k])));
  } finally {
    await closeOwn();
    await closeRaw();
  }
  process.stderr.write(
    `${c.name}: ${row.rates.map((r, i) => `${SIZES[i]} messages ${r.toFixed(1)}`).join(', ')} invokes/s; 5,000 ÷ 10 ${row.ratio.toFixed(2)}${row.ownMs === undefined ? '' : `; own ms per invoke ${row.ownMs.map((m) => m.toFixed(1)).join(', ')}`}\n`,
  );
  Object.assign(row, await threadBytes(c));
  rows.push(row);
}
await pool.end();

const mib = (b) => `${(b / 1024 / 1024).toFixed(2)} MiB`;
const ms = (r) =>
  r.ownMs === undefined ? '–' : `${r.ownMs[0].toFixed(1)} / ${r.ownMs[2].toFixed(1)}`;
console.log(
  `| checkpointer | ${SIZES.map((n) => `invokes/s at ${n.toLocaleString('en')} messages`).join(' | ')} | 5,000 ÷ 10 | own ms per invoke at 10 / 5,000 | bytes per ${BYTES_TURNS}-invoke thread (${BYTES_THREADS} threads): open / closed | of which the saver's records (JSON) |`,
);
console.log(`| --- | ${SIZES.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: |`);
for (const r of rows)
  console.log(
    `| ${r.name} | ${r.rates.map((x) => x.toFixed(1)).join(' | ')} | ${r.ratio.toFixed(2)} | ${ms(r)} | ${r.bytes === undefined ? '–' : `${mib(r.bytes)} / ${mib(r.restBytes)}`} | ${r.records === undefined ? '–' : mib(r.records)} |`,
  );
console.log(
  `\nThe ${BYTES_TURNS * 2} messages' own JSON: ${mib(messagesJson)}. Bytes: ${BYTES_THREADS} threads of ${BYTES_TURNS} invokes written round robin, less the store before them, per thread. ${INVOKES}–${3 * INVOKES} rounds of one invoke per thread (at least 2 s, or ${INVOKES}). 5,000 ÷ 10: the median of the rounds' ratios. Own ms: the median of the rounds' invoke time less the reference's.`,
);
