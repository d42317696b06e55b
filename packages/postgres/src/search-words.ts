// The word rule of search, both sides of it in one place so they cannot drift apart: the
// words the index keeps for a text (`wordsOf`) and the patterns a query needs those words
// to match (`queryRuns`). A word is a maximal run of letters, digits and marks; anything
// else — spaces, punctuation, symbols, and core's message separator "A" — separates
// words. The index is a filter: it names the blocks of a session whose words could hold
// the query, and search then checks the stored text itself, so exactness never depends
// on it (see search-index-plan.ts and statements/listing.ts).
import { SEARCH_TEXT_SEPARATOR } from '@sessionkit/core/adapter';

// Letters, digits and combining marks, except core's separator (an upper-case "A" cannot
// occur in lower-cased text otherwise).
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** The distinct words of `text` (a stored search text or a lower-cased title), in order of first use. */
export function wordsOf(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(WORD)) {
    for (const w of m[0].split(SEARCH_TEXT_SEPARATOR)) if (w !== '') seen.add(w);
  }
  return [...seen];
}

/**
 * Where a run of word characters of the query sits: `whole` (separators on both sides in
 * the query, so it is a whole word of the text), `prefix` (a separator before it: it
 * starts a word), `suffix` (one after it: it ends a word), `inner` (anywhere in a word).
 */
export type RunKind = 'whole' | 'prefix' | 'suffix' | 'inner';

/** A run of the query and the LIKE pattern its word must match in a words row. */
export interface QueryRun {
  run: string;
  kind: RunKind;
  /** LIKE pattern over a words row (`' w1 w2 … '`); words hold no LIKE wildcard. */
  pattern: string;
}

/**
 * The runs of word characters in `query` (lower-cased by core), each with the pattern a
 * words row must match for a text containing `query` to be in its block. Ordered best
 * filter first: bounded runs before unbounded ones, longer before shorter. Runs whose
 * pattern the trigram index cannot use (fewer than three characters in all, boundaries
 * counted) are left out. Empty when the query has no usable run.
 */
export function queryRuns(query: string): QueryRun[] {
  const out: QueryRun[] = [];
  for (const m of query.matchAll(WORD)) {
    const start = m.index;
    const end = start + m[0].length;
    const left = start > 0;
    const right = end < query.length;
    const kind: RunKind = left && right ? 'whole' : left ? 'prefix' : right ? 'suffix' : 'inner';
    const run = m[0];
    const bounds = (left ? 1 : 0) + (right ? 1 : 0);
    if (run.length + bounds < 3) continue;
    out.push({ run, kind, pattern: `%${left ? ' ' : ''}${run}${right ? ' ' : ''}%` });
  }
  const score = (r: QueryRun) => r.pattern.length;
  return out.sort((a, b) => score(b) - score(a));
}

/** A words row: `words` joined by single spaces, with a space before the first and after the last. */
export function wordsRowText(words: readonly string[]): string {
  return ` ${words.join(' ')} `;
}

/** The words of a words row (`wordsRowText`'s inverse). */
export function wordsOfRow(row: string): string[] {
  return row.split(' ').filter((w) => w !== '');
}
