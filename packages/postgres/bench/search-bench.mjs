// The search parts of the benchmark (issues 12, 30): storage after 200 turns beside the raw
// rows, and search over 10,000 sessions × 100 messages.
import { performance } from 'node:perf_hooks';
import { planIndex } from '../dist/search-index-plan.js';
import { prng, prose } from './text.mjs';

const MiB = (n) => `${(n / 1048576).toFixed(2)} MiB`;

/**
 * pg_total_relation_size (heap, TOAST, indexes) of `schema.table`, with its partitions' when
 * it is partitioned (a partitioned table's own size is 0: its rows live in its partitions).
 */
async function sizeOf(admin, schema, table) {
  const r = await admin.query(
    `SELECT pg_total_relation_size($1::regclass) + coalesce((SELECT sum(pg_total_relation_size(relid))
       FROM pg_partition_tree($1::regclass) WHERE relid <> $1::regclass), 0) AS n`,
    [`"${schema}".${table}`],
  );
  return Number(r.rows[0].n);
}

/** Conversations after the first that the per-conversation figure adds (each a new session). */
const MORE_CONVERSATIONS = 3;

/** 200 turns (the bench's turns from `first` on) into a new session `id`, then its search rows indexed. */
async function converse(store, id, first, turn) {
  const s = await store.create({ id });
  let revision = s.revision;
  for (let i = 0; i < 200; i++) {
    revision = (await store.commit(id, { expectedRevision: revision, append: turn(first + i) }))
      .revision;
  }
  await store.indexPendingSearch();
}

/** How long the storage bench leaves a store idle: its upkeep vacuums the pending queue ~1–2 s after the last pass. */
const SETTLE_MS = 2500;

/**
 * 200 turns into one new session of a store opened with each search scope; prints the
 * bytes of the message rows (the raw rows: `messages` with its primary key, what the raw
 * statement writes) and of the search tables, as written (the pending queue still holds
 * the dead rows its indexer took), settled (after SETTLE_MS idle: what the store's own
 * upkeep leaves when autovacuum is off) and after VACUUM; then what 3 more conversations
 * (new sessions, other turns) add to each side, settled. Returns the ratios.
 */
export async function storageBench({ admin, open, turn }) {
  console.log('\nstorage after 200 turns (2 messages of ~1 KB each) in one session:');
  const out = {};
  for (const search of ['messages', 'titles', 'none']) {
    const schema = `sk_bench_storage_${search}_${process.pid}`;
    const store = await open(schema, search);
    await converse(store, 'storage', 0, turn);
    const measure = async () => {
      const rows = await sizeOf(admin, schema, 'messages');
      let searchBytes = 0;
      for (const table of ['search_chunks', 'search_words', 'search_pending']) {
        searchBytes += await sizeOf(admin, schema, table);
      }
      return { rows, searchBytes, ratio: (rows + searchBytes) / rows };
    };
    const written = await measure();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settled = await measure();
    await admin.query(
      `VACUUM "${schema}".search_chunks, "${schema}".search_words, "${schema}".search_pending, "${schema}".messages`,
    );
    const vacuumed = await measure();
    console.log(
      `search "${search}"`.padEnd(20) +
        `raw rows ${MiB(vacuumed.rows)}, search ${MiB(written.searchBytes)} as written / ${MiB(settled.searchBytes)} settled / ${MiB(vacuumed.searchBytes)} after VACUUM: total ${written.ratio.toFixed(2)}x / ${settled.ratio.toFixed(2)}x / ${vacuumed.ratio.toFixed(2)}x the raw rows`,
    );
    // What each further conversation adds, both sides (its message rows, its search rows),
    // settled: the figure above also charges the one conversation with the schema's fixed
    // pages (empty tables' and indexes' minimum pages, free-space maps, the trigram index's
    // pending list), which a second conversation does not add again.
    for (let c = 1; c <= MORE_CONVERSATIONS; c++) await converse(store, `more-${c}`, 200 * c, turn);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const more = await measure();
    const addedRows = more.rows - vacuumed.rows;
    const perConversation = (addedRows + more.searchBytes - vacuumed.searchBytes) / addedRows;
    out[search] = {
      written: written.ratio,
      settled: settled.ratio,
      vacuumed: vacuumed.ratio,
      perConversation,
    };
    await store.close();
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  }
  console.log(
    `storage after 200 turns, search "messages": ${out.messages.written.toFixed(2)}x as written, ${out.messages.settled.toFixed(2)}x settled, ${out.messages.vacuumed.toFixed(2)}x after VACUUM (target <= 2.0x settled); "titles": ${out.titles.written.toFixed(2)}x / ${out.titles.settled.toFixed(2)}x / ${out.titles.vacuumed.toFixed(2)}x (target <= 1.1x)`,
  );
  console.log(
    `per conversation (what ${MORE_CONVERSATIONS} more conversations of 200 turns, each a new session, add to both sides, settled): search "messages" ${out.messages.perConversation.toFixed(2)}x, "titles" ${out.titles.perConversation.toFixed(2)}x, "none" ${out.none.perConversation.toFixed(2)}x the raw rows they add`,
  );
  return out;
}

const SESSIONS = 10_000;
const TURNS_PER_SESSION = 50; // 100 messages

/**
 * Loads 10,000 sessions × 100 messages (~120 characters each, one pending row per turn as a
 * commit writes it) into `listSchema`'s search tables as the indexer writes them (chunks and
 * block words planned by the store's own code, written in bulk), plus the latest turn of
 * 200 sessions left pending as a busy store has them. Times `list({query, limit: 20})` for
 * 3- and 12-character queries, common and absent.
 */
export async function searchBench({ admin, listStore, listSchema, timeIt }) {
  const q = `"${listSchema}"`;
  const t0 = performance.now();
  const epochs = new Map(
    (await admin.query(`SELECT id, search_epoch::text AS e FROM ${q}.sessions`)).rows.map((r) => [
      r.id,
      r.e,
    ]),
  );
  const next = prng(99);
  for (let b = 0; b < SESSIONS / 100; b++) {
    const rows = [];
    const pending = [[], [], [], [], []];
    for (let n = b * 100 + 1; n <= b * 100 + 100; n++) {
      const id = `s-${String(n).padStart(6, '0')}`;
      for (let t = 0; t < TURNS_PER_SESSION; t++) {
        const text = `A${prose(next, 100 + (t % 3) * 20)}A${prose(next, 100 + (t % 2) * 30)}`;
        const row = { sessionId: id, epoch: epochs.get(id), seq: t * 2, nextSeq: t * 2 + 2, text };
        if (t === TURNS_PER_SESSION - 1 && n % 50 === 0) {
          for (const [i, v] of [id, t * 2, t * 2 + 2, row.epoch, text].entries())
            pending[i].push(v);
        } else rows.push(row);
      }
    }
    const plan = planIndex(rows, () => undefined);
    await admin.query(
      `INSERT INTO ${q}.search_chunks (session_id, epoch, first_seq, end_seq, text)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::integer[], $5::text[])`,
      [
        plan.chunks.map((c) => c.sessionId),
        plan.chunks.map((c) => c.epoch),
        plan.chunks.map((c) => c.firstSeq),
        plan.chunks.map((c) => c.endSeq),
        plan.chunks.map((c) => c.text),
      ],
    );
    await admin.query(
      `INSERT INTO ${q}.search_words (session_id, epoch, block, words)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::text[])`,
      [
        plan.words.map((w) => w.sessionId),
        plan.words.map((w) => w.epoch),
        plan.words.map((w) => w.block),
        plan.words.map((w) => w.words),
      ],
    );
    await admin.query(
      `INSERT INTO ${q}.search_pending (session_id, seq, next_seq, epoch, text)
       SELECT * FROM unnest($1::text[], $2::integer[], $3::integer[], $4::bigint[], $5::text[])`,
      pending,
    );
  }
  await admin.query(`UPDATE ${q}.sessions SET message_count = 100`);
  await admin.query(
    `ANALYZE ${q}.sessions, ${q}.search_chunks, ${q}.search_words, ${q}.search_pending`,
  );
  console.log(
    `\nsearch over 10,000 sessions × 100 messages of ~120 characters (loaded in ${((performance.now() - t0) / 1000).toFixed(0)} s; 200 turns pending), list({query, limit: 20}), median of 21:`,
  );
  const queries = [
    ['3 chars, in every session', 'mon'],
    ['3 chars, nowhere', 'xqz'],
    ['12 chars, in a few sessions', 'quazen lostr'],
    ['12 chars, nowhere', 'mirely lyhog'],
  ];
  const out = {};
  for (const [label, query] of queries) {
    const found = (await listStore.list({ limit: 20, query })).length;
    const now = await timeIt(21, () => listStore.list({ limit: 20, query }));
    out[query] = now;
    console.log(
      `${`"${query}" (${label})`.padEnd(44)} ${now.toFixed(2).padStart(7)} ms   (${found} found)`,
    );
  }
  const worst3 = Math.max(out.mon, out.xqz);
  const worst12 = Math.max(out['quazen lostr'], out['mirely lyhog']);
  console.log(
    `search median, worst 3-char query: ${worst3.toFixed(1)} ms, worst 12-char query: ${worst12.toFixed(1)} ms (target <= 50 ms)`,
  );
}
