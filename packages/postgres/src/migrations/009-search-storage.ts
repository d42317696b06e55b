// Schema version 9: the same search data in fewer bytes (issue 30, storage after a 200-turn
// conversation). Nothing is rewritten: every option below applies to rows and index
// entries written from now on, and search reads old and new alike.
import type { Migration } from './migration.js';

/**
 * SQL of version 9, given the quoted schema name `s`:
 * - `search_chunks.text` compressed with pglz instead of lz4: on prose-like text pglz
 *   stores a chunk in ~20 % fewer bytes (212 KB against 265 KB for the 400 KB of a 200-turn
 *   conversation); the cost is the indexer's, off the turn, and chunks are only read for
 *   the blocks a search's words match. On PostgreSQL 13 (no per-column compression) pglz
 *   is what it used already.
 * - `search_words`: `toast_tuple_target` 8160, so a words row (at most ~4,000 characters,
 *   two per page) stays in its page uncompressed instead of going to TOAST, whose chunks,
 *   index and half-empty pages cost more than the ~30 % pglz saves on a list of distinct
 *   words (98 KB of TOAST for 64 KB of words; 74 KB in the heap instead). The trigram
 *   recheck then reads them without decompressing.
 * - the trigram index of `search_words` (when present; trigram.ts creates it likewise
 *   after the migrations): `fastupdate` off. Its 64 kB pending list left the pages of every
 *   merge in the file until a VACUUM (which this store never runs on `search_words`), 188 KB
 *   against 123 KB rebuilt; the indexer writes only the words new to a block, a few per
 *   turn, so inserting them into the tree directly costs little, and the entries still
 *   pending are searched until a VACUUM merges them.
 */
export function searchStorageSql(s: string): string {
  return `
DO $do$ BEGIN
  EXECUTE 'ALTER TABLE ${s.replaceAll("'", "''")}.search_chunks ALTER COLUMN text SET COMPRESSION pglz';
EXCEPTION WHEN syntax_error OR feature_not_supported THEN NULL;
END $do$;
ALTER TABLE ${s}.search_words SET (toast_tuple_target = 8160);
ALTER INDEX IF EXISTS ${s}.search_words_trgm SET (fastupdate = off);
`;
}

/** Version 9 of the schema (see `searchStorageSql`). */
export const migration009: Migration = {
  version: 9,
  name: 'search_storage',
  sql: searchStorageSql,
};
