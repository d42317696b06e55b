// The search text a write stores for its messages (`search_pending` rows, schema version 6;
// the same texts as versions 4 and 5): per commit, the texts of consecutive messages, each
// as core's `searchTextOf` writes it (an "A" separator, then the lower-cased text), so a
// LIKE over one row never matches across two messages and the rows of a history
// concatenate to `searchTextOf(history)`. The title's text is `titleSearchText`.
import { SEARCH_TEXT_SEPARATOR, searchTextOf } from '@sessionkit/core/adapter';
import type { SearchScope } from './search-scope.js';

/** Largest search row (UTF-16 units) before a new row starts; one message is never split. */
export const SEARCH_CHUNK = 64 * 1024;

/**
 * One message's search text as stored: core's `searchTextOf([message])` (empty when the
 * message has no text) with NUL, which PostgreSQL text cannot hold, as core's separator
 * "A". Exact: a query cannot contain NUL (core rejects it), so no match spans a NUL, and
 * no lower-cased query contains "A" either. (Versions 4–11 wrote U+FFFD, which a query
 * can contain: `repair()` rewrites such rows, as their text is no longer what this writes.)
 */
export function searchRowText(message: unknown): string {
  return searchTextOf([message]).replaceAll('\u0000', SEARCH_TEXT_SEPARATOR);
}

/**
 * Search rows of consecutive messages: row i holds the messages at offsets
 * `seqs[i] … nexts[i] - 1` (messages without text included, giving none).
 */
export interface SearchChunks {
  seqs: number[];
  nexts: number[];
  texts: string[];
}

/**
 * The search rows of `messages` (offsets relative to the first one): the stored search
 * texts of consecutive messages concatenated, cut between messages into rows of about
 * 64 KB (a turn is usually one row). Rows need no overlap: a match never spans two
 * messages, and one message is never split.
 */
export function searchChunks(messages: readonly unknown[]): SearchChunks {
  const out: SearchChunks = { seqs: [], nexts: [], texts: [] };
  let start = -1;
  let text = '';
  for (let i = 0; i < messages.length; i++) {
    const t = searchRowText(messages[i]);
    if (t === '') continue;
    if (start >= 0 && text.length + t.length > SEARCH_CHUNK) {
      out.seqs.push(start);
      out.nexts.push(i);
      out.texts.push(text);
      start = -1;
      text = '';
    }
    if (start < 0) start = i;
    text += t;
  }
  if (start >= 0) {
    out.seqs.push(start);
    out.nexts.push(messages.length);
    out.texts.push(text);
  }
  return out;
}

/**
 * The pending rows a write stores for `messages` under `scope` (none unless `messages`):
 * `searchChunks`, with the first row starting at the first message even when that one has
 * no text, so the rows of consecutive commits cover their messages without a gap and the
 * indexer can join them into one chunk.
 */
export function searchChunksIn(scope: SearchScope, messages: readonly unknown[]): SearchChunks {
  if (scope !== 'messages') return { seqs: [], nexts: [], texts: [] };
  const chunks = searchChunks(messages);
  if (chunks.seqs.length > 0) chunks.seqs[0] = 0;
  return chunks;
}

/**
 * The title as search reads it under `scope` (`sessions.title_search`; `''`: not searched):
 * lower-cased by JavaScript, as core lower-cases queries (titles hold no NUL: core refuses it).
 */
export function titleSearchText(scope: SearchScope, title: string): string {
  return scope === 'none' ? '' : title.toLowerCase();
}
