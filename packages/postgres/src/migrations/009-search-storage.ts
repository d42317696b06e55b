// Schema version 9: words rows kept in their pages (issue 30, storage after a 200-turn
// conversation). Nothing is rewritten: the option applies to rows written from now on, and
// search reads old and new alike.
import type { Migration } from './migration.js';

/**
 * SQL of version 9, given the quoted schema name `s`: `search_words` gets
 * `toast_tuple_target` 8160, so a words row (at most ~4,000 characters, two per page) stays
 * in its page uncompressed instead of going to TOAST, whose chunks, index and half-filled
 * pages cost more than the ~30 % pglz saves on a list of distinct words (98 KB of TOAST for
 * 64 KB of words in a 200-turn conversation; 74 KB of heap instead), and the indexer no
 * longer compresses them. Measured and not kept (README, "Version 9"): pglz for the chunks
 * (20 % fewer bytes, but ~7× lz4's compression time: +20 % server CPU per turn) and the
 * trigram index without its pending list (a third smaller for one conversation, but
 * larger at 10,000 sessions and 2.4× slower to fill).
 */
export function searchStorageSql(s: string): string {
  return `
ALTER TABLE ${s}.search_words SET (toast_tuple_target = 8160);
`;
}

/** Version 9 of the schema (see `searchStorageSql`). */
export const migration009: Migration = {
  version: 9,
  name: 'search_storage',
  sql: searchStorageSql,
};
