// What the releases before version 6 wrote, for the migration tests: their turn function
// `sk_append` (versions 4 and 5 share its signature), called as those releases called it.
import { searchChunks } from '../src/search-rows.js';

/** The call of version 4's and 5's `sk_append` in schema `s` (quoted). */
export const V5_APPEND = (s: string) =>
  `SELECT * FROM ${s}.sk_append(p_id => $1::text, p_expected_rev => $2::bigint,
    p_expected_count => NULL::integer, p_bodies => $3::text[], p_search_seq => $4::integer[],
    p_search => $5::text[], p_now => now(), p_inc_tokens => NULL::bigint,
    p_inc_cost => NULL::double precision, p_inc_turns => NULL::bigint)`;

/** The values of `V5_APPEND` for a turn of `messages` at `revision`. */
export function v5AppendValues(id: string, revision: number, messages: unknown[]): unknown[] {
  const chunks = searchChunks(messages);
  return [id, revision, messages.map((m) => JSON.stringify(m)), chunks.seqs, chunks.texts];
}
