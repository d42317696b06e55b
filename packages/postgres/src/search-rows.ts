// The search_rows table (schema version 4 format): per commit, the texts of consecutive
// messages, each as core's `searchTextOf` writes it (a "A" separator, then the
// lower-cased text), so a LIKE over one row never matches across two messages and the
// rows of a history concatenate to `searchTextOf(history)`. The title is the row at
// seq -1 (lower-cased, no separator).
import { searchTextOf } from '@sessionkit/core/adapter';
import type { PoolClient } from 'pg';
import type { SearchScope } from './search-scope.js';

/** Largest search row (UTF-16 units) before a new row starts; one message is never split. */
export const SEARCH_CHUNK = 64 * 1024;

/**
 * One message's search text as stored: core's `searchTextOf([message])` (empty when the
 * message has no text) with NUL, which PostgreSQL text cannot hold, as U+FFFD (a query
 * cannot contain NUL: core rejects it).
 */
export function searchRowText(message: unknown): string {
  return searchTextOf([message]).replaceAll('\u0000', '\uFFFD');
}

/** Search rows of consecutive messages: `seqs[i]` is the offset of row i's first message. */
export interface SearchChunks {
  seqs: number[];
  texts: string[];
}

/**
 * The search rows of `messages` (offsets relative to the first one): the stored search
 * texts of consecutive messages concatenated, cut between messages into rows of about
 * 64 KB (a turn is usually one row). Rows need no overlap: a match never spans two
 * messages, and one message is never split.
 */
export function searchChunks(messages: readonly unknown[]): SearchChunks {
  const out: SearchChunks = { seqs: [], texts: [] };
  let start = -1;
  let text = '';
  for (let i = 0; i < messages.length; i++) {
    const t = searchRowText(messages[i]);
    if (t === '') continue;
    if (start >= 0 && text.length + t.length > SEARCH_CHUNK) {
      out.seqs.push(start);
      out.texts.push(text);
      start = -1;
      text = '';
    }
    if (start < 0) start = i;
    text += t;
  }
  if (start >= 0) {
    out.seqs.push(start);
    out.texts.push(text);
  }
  return out;
}

/** The search rows a write stores for `messages` under `scope`: none unless `messages`. */
export function searchChunksIn(scope: SearchScope, messages: readonly unknown[]): SearchChunks {
  return scope === 'messages' ? searchChunks(messages) : { seqs: [], texts: [] };
}

/** The text of the title's search row under `scope` (`''`: no row). */
export function titleSearchText(scope: SearchScope, title: string): string {
  return scope === 'none' ? '' : title.toLowerCase();
}

/**
 * Rewrites the message search rows of every session from its stored messages, in pages
 * of sessions, inside the caller's transaction (the version 4 migration: rows written by
 * earlier versions joined messages with a newline, so a query could match across two
 * messages). A session whose bodies do not parse keeps its rows (`repair()` reports it).
 */
export async function rebuildAllSearchRows(client: PoolClient, s: string): Promise<void> {
  let after = '';
  for (;;) {
    const page = await client.query<{ id: string }>(
      `SELECT id FROM ${s}.sessions WHERE id > $1::text COLLATE "C" ORDER BY id LIMIT 100`,
      [after],
    );
    if (page.rows.length === 0) return;
    for (const { id } of page.rows) await rebuildSessionSearchRows(client, s, id);
    after = page.rows[page.rows.length - 1]!.id;
  }
}

/** Rewrites one session's message search rows; false when a body does not parse. */
export async function rebuildSessionSearchRows(
  client: PoolClient,
  s: string,
  id: string,
): Promise<boolean> {
  const r = await client.query<{ body: string }>(
    `SELECT body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
    [id],
  );
  const messages: unknown[] = [];
  for (const row of r.rows) {
    try {
      messages.push(JSON.parse(row.body));
    } catch {
      return false;
    }
  }
  await writeSearchRows(client, s, id, searchChunks(messages));
  return true;
}

/** Replaces the message search rows (seq ≥ 0) of `id` by `chunks`. */
export async function writeSearchRows(
  client: PoolClient,
  s: string,
  id: string,
  chunks: SearchChunks,
): Promise<void> {
  await client.query(`DELETE FROM ${s}.search_rows WHERE session_id = $1 AND seq >= 0`, [id]);
  if (chunks.seqs.length === 0) return;
  await client.query(
    `INSERT INTO ${s}.search_rows (session_id, seq, text)
     SELECT $1, u.o, u.t FROM unnest($2::integer[], $3::text[]) AS u(o, t)`,
    [id, chunks.seqs, chunks.texts],
  );
}
