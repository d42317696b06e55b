// What indexing pending search text writes (schema version 6): the text of consecutive
// messages joined into chunks of about 64 KB (compressed by PostgreSQL), and for each block
// of 4,096 messages the words it holds, once per block, in rows that a trigram index
// covers. A turn adds only the words its block did not have yet, so indexing it costs what
// is new in its text, not its length or the history before it. Pure: the indexer, the
// migration and the rebuilds (search-scope.ts, repair.ts) all write what this plans.
import { wordsOf, wordsRowText } from './search-words.js';

/**
 * Messages per block: the unit the words index names. Search reads the chunks of the
 * blocks whose words match; a larger block adds fewer new words per turn (a block's
 * vocabulary fills up) but makes a block whose words match without its text a longer read.
 */
export const BLOCK_MESSAGES = 4096;

/** Characters (UTF-16 units) of text a chunk grows to; a longer single row stays one chunk. */
export const CHUNK_CHARS = 64 * 1024;

/**
 * Characters a words row grows to: small rows keep the trigram filter sharp (a row holding
 * a few hundred words rarely has all of a query's trigrams by chance), and two rows fit a page.
 */
export const WORDS_ROW_CHARS = 4000;

/** A row of `search_pending`: the text of messages `seq … nextSeq - 1` (seq -1: the title). */
export interface PendingText {
  sessionId: string;
  /** The session's `search_epoch` when the row was written (bigint as text). */
  epoch: string;
  seq: number;
  nextSeq: number;
  text: string;
}

/** A row of `search_chunks`: the text of messages `firstSeq … endSeq - 1`. */
export interface ChunkRow {
  sessionId: string;
  epoch: string;
  firstSeq: number;
  endSeq: number;
  text: string;
}

/** A row of `search_words`: words of one block (-1: the title) new to it, as `wordsRowText`. */
export interface WordsRow {
  sessionId: string;
  epoch: string;
  block: number;
  words: string;
}

/**
 * What to write, and the words each block of messages gains (to remember once it is
 * committed). Title words are written whole every time (a title patch replaces them), so
 * they are never remembered.
 */
export interface IndexPlan {
  chunks: ChunkRow[];
  words: WordsRow[];
  learned: Map<string, string[]>;
}

/** The block of message `seq`; -1 for the title row. */
export function blockOf(seq: number): number {
  return seq < 0 ? -1 : Math.floor(seq / BLOCK_MESSAGES);
}

/** The key of a block in the indexer's memory of the words it holds. */
export function blockKey(sessionId: string, epoch: string, block: number): string {
  return `${epoch}\u0000${block}\u0000${sessionId}`;
}

/**
 * Plans the rows for `rows` (sorted by session, epoch, seq). Rows of one block that follow
 * each other without a gap share a chunk up to `CHUNK_CHARS`; title rows make no chunk
 * (search checks the title in the sessions row) but give their words. `known(key)` is
 * what a block of messages already holds (undefined: nothing known); words already held or
 * planned are not written again.
 */
export function planIndex(
  rows: readonly PendingText[],
  known: (key: string) => ReadonlySet<string> | undefined,
): IndexPlan {
  const plan: IndexPlan = { chunks: [], words: [], learned: new Map() };
  const titles = new Map<string, string[]>();
  const planned = new Map<string, Set<string>>();
  let chunk: ChunkRow | undefined;
  for (const row of rows) {
    const block = blockOf(row.seq);
    if (block < 0) {
      const key = blockKey(row.sessionId, row.epoch, block);
      titles.set(key, [...new Set([...(titles.get(key) ?? []), ...wordsOf(row.text)])]);
      continue;
    }
    learnWords(plan, planned, row, block, known);
    const extends_ =
      chunk !== undefined &&
      chunk.sessionId === row.sessionId &&
      chunk.epoch === row.epoch &&
      chunk.endSeq === row.seq &&
      blockOf(chunk.firstSeq) === block &&
      chunk.text.length + row.text.length <= CHUNK_CHARS;
    if (chunk !== undefined && extends_) {
      chunk.text += row.text;
      chunk.endSeq = row.nextSeq;
      continue;
    }
    chunk = {
      sessionId: row.sessionId,
      epoch: row.epoch,
      firstSeq: row.seq,
      endSeq: row.nextSeq,
      text: row.text,
    };
    plan.chunks.push(chunk);
  }
  for (const [key, words] of plan.learned) pushWordsRows(plan, key, words);
  for (const [key, words] of titles) pushWordsRows(plan, key, words);
  return plan;
}

/** Adds the words of `row` its block neither holds nor gained earlier in the plan. */
function learnWords(
  plan: IndexPlan,
  planned: Map<string, Set<string>>,
  row: PendingText,
  block: number,
  known: (key: string) => ReadonlySet<string> | undefined,
): void {
  const key = blockKey(row.sessionId, row.epoch, block);
  const held = known(key);
  for (const w of wordsOf(row.text)) {
    if (held?.has(w)) continue;
    let set = planned.get(key);
    if (set === undefined) {
      set = new Set();
      planned.set(key, set);
      plan.learned.set(key, []);
    }
    if (set.has(w)) continue;
    set.add(w);
    plan.learned.get(key)!.push(w);
  }
}

/** The words rows of one block's new `words`, cut at `WORDS_ROW_CHARS`. */
function pushWordsRows(plan: IndexPlan, key: string, words: readonly string[]): void {
  const [epoch, block, sessionId] = key.split('\u0000') as [string, string, string];
  let batch: string[] = [];
  let length = 1;
  const flush = () => {
    if (batch.length === 0) return;
    plan.words.push({ sessionId, epoch, block: Number(block), words: wordsRowText(batch) });
    batch = [];
    length = 1;
  };
  for (const w of words) {
    if (length + w.length + 1 > WORDS_ROW_CHARS) flush();
    batch.push(w);
    length += w.length + 1;
  }
  flush();
}
