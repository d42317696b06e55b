// The statements that write what search-index-plan.ts plans, shared by the indexer, the
// version 6 migration and the rebuilds (scope change, repair), each on a client inside the
// caller's transaction. `s`: the quoted schema.
import type { PoolClient } from 'pg';
import { blockKey, type IndexPlan, type PendingText } from './search-index-plan.js';
import { wordsOfRow } from './search-words.js';

/**
 * Inserts the plan's chunks and words rows, one multi-row INSERT each with a parameter per
 * value (plain text parameters: an array of megabytes of text would be parsed
 * character by character first).
 */
export async function writeIndexPlan(
  client: PoolClient,
  s: string,
  plan: IndexPlan,
): Promise<void> {
  const chunks = plan.chunks.map((c) => [c.sessionId, c.epoch, c.firstSeq, c.endSeq, c.text]);
  const words = plan.words.map((w) => [w.sessionId, w.epoch, w.block, w.words]);
  for (let i = 0; i < chunks.length; i += ROWS_PER_INSERT) {
    await insertRows(
      client,
      `${s}.search_chunks (session_id, epoch, first_seq, end_seq, text)`,
      ['text', 'bigint', 'integer', 'integer', 'text'],
      chunks.slice(i, i + ROWS_PER_INSERT),
    );
  }
  for (let i = 0; i < words.length; i += ROWS_PER_INSERT) {
    await insertRows(
      client,
      `${s}.search_words (session_id, epoch, block, words)`,
      ['text', 'bigint', 'integer', 'text'],
      words.slice(i, i + ROWS_PER_INSERT),
    );
  }
}

// Rows per INSERT statement (PostgreSQL takes at most 65,535 parameters).
const ROWS_PER_INSERT = 500;

/** `INSERT INTO target VALUES (…), (…)` of `rows`, each value a parameter cast to its type. */
async function insertRows(
  client: PoolClient,
  target: string,
  types: readonly string[],
  rows: readonly unknown[][],
): Promise<void> {
  if (rows.length === 0) return;
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const refs = row.map((v, i) => {
      values.push(v);
      return `$${values.length}::${types[i]}`;
    });
    return `(${refs.join(', ')})`;
  });
  await client.query(`INSERT INTO ${target} VALUES ${tuples.join(', ')}`, values);
}

/** The words stored for each block of `keys` (`blockKey`s), one set per key asked (empty: none yet). */
export async function readBlockWords(
  client: PoolClient,
  s: string,
  blocks: readonly { sessionId: string; epoch: string; block: number }[],
): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const b of blocks) out.set(blockKey(b.sessionId, b.epoch, b.block), new Set());
  if (blocks.length === 0) return out;
  const r = await client.query<{ session_id: string; epoch: string; block: number; words: string }>(
    `SELECT w.session_id, w.epoch::text AS epoch, w.block, w.words
     FROM unnest($1::text[], $2::bigint[], $3::integer[]) AS b(id, epoch, block)
     JOIN ${s}.search_words AS w ON w.session_id = b.id AND w.epoch = b.epoch AND w.block = b.block`,
    [blocks.map((b) => b.sessionId), blocks.map((b) => b.epoch), blocks.map((b) => b.block)],
  );
  for (const row of r.rows) {
    const set = out.get(blockKey(row.session_id, row.epoch, row.block));
    for (const w of wordsOfRow(row.words)) set?.add(w);
  }
  return out;
}

/** Pending texts as the plan takes them, from rows with `session_id, epoch, seq, next_seq, text`. */
export function pendingTextsOf(
  rows: readonly {
    session_id: string;
    epoch: string;
    seq: number;
    next_seq: number;
    text: string;
  }[],
): PendingText[] {
  return rows.map((r) => ({
    sessionId: r.session_id,
    epoch: String(r.epoch),
    seq: r.seq,
    nextSeq: r.next_seq,
    text: r.text,
  }));
}
