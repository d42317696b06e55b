// What a schema's search covers, recorded in `settings` (migration 5): `messages` (the
// title and each message's text: the contract's search), `titles` (titles only) or `none`.
// Changing it rebuilds the search data in batches, reporting progress.
import type { ErrorFactory } from '@sessionkit/core/adapter';
import type { PoolClient } from 'pg';
import { shapeChunksFor } from './search-chunks-table.js';
import { rebuildSessionSearch } from './search-rebuild.js';
import { searchChunksIn, titleSearchText } from './search-rows.js';

/** What `list({ query })` searches: see the README's "Search scope". */
export type SearchScope = 'messages' | 'titles' | 'none';

/** The accepted values of the `search` option. */
export const SEARCH_SCOPES: readonly SearchScope[] = ['messages', 'titles', 'none'];

/** Progress of a long step of `migrate()` (a scope change rebuilding the search rows). */
export interface MigrationProgress {
  /** What is being done, e.g. `"search scope messages → titles"`. */
  task: string;
  /** Sessions done so far. */
  done: number;
  /** Sessions to do (counted when the step started). */
  total: number;
}

/** Called after each batch of a long migration step. */
export type ProgressListener = (progress: MigrationProgress) => void;

/** Throws `invalid_argument` unless `value` is a search scope (or undefined). */
export function assertSearchScope(
  errors: ErrorFactory,
  value: unknown,
): asserts value is SearchScope | undefined {
  if (value !== undefined && !SEARCH_SCOPES.includes(value as SearchScope)) {
    throw errors.invalid(
      `search must be one of ${SEARCH_SCOPES.map((x) => `"${x}"`).join(', ')}, got ${JSON.stringify(String(value)).slice(0, 40)}`,
    );
  }
}

/** The scope recorded in schema `s` (quoted); `messages` when the row is missing. */
export async function readSearchScope(client: PoolClient, s: string): Promise<SearchScope> {
  const r = await client.query<{ value: string }>(
    `SELECT value FROM ${s}.settings WHERE name = 'search'`,
  );
  const v = r.rows[0]?.value;
  return SEARCH_SCOPES.includes(v as SearchScope) ? (v as SearchScope) : 'messages';
}

// Sessions per batch of a rebuild.
const BATCH = 200;

/**
 * Inside the caller's transaction (holding the schema's migration lock): records `to`,
 * gives `search_chunks` the form `to` needs (search-chunks-table.ts: storage only under
 * `messages`) and rebuilds every session's search data for it (search-rebuild.ts), in
 * batches of 200 sessions, calling `onProgress` after each: `messages` computes each
 * message's text from the stored messages (a session whose bodies do not parse keeps its
 * data; `repair()` reports it), `titles` keeps the title only, `none` nothing. Titles are
 * lower-cased by JavaScript, as every write does.
 */
export async function changeSearchScope(
  client: PoolClient,
  s: string,
  from: SearchScope,
  to: SearchScope,
  onProgress?: ProgressListener,
): Promise<void> {
  await client.query(
    `INSERT INTO ${s}.settings (name, value) VALUES ('search', $1)
     ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
    [to],
  );
  await shapeChunksFor(client, s, to);
  const total = Number(
    (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${s}.sessions`)).rows[0]?.n ?? 0,
  );
  const task = `search scope ${from} → ${to}`;
  let done = 0;
  let after = '';
  for (;;) {
    const page = await client.query<{ id: string; title: string }>(
      `SELECT id, title FROM ${s}.sessions WHERE id > $1::text COLLATE "C" ORDER BY id LIMIT ${BATCH}`,
      [after],
    );
    if (page.rows.length === 0) break;
    for (const { id, title } of page.rows) {
      const messages = to === 'messages' ? await storedMessages(client, s, id) : [];
      if (messages === undefined) continue;
      await rebuildSessionSearch(
        client,
        s,
        id,
        searchChunksIn(to, messages),
        titleSearchText(to, title),
      );
    }
    done += page.rows.length;
    after = page.rows[page.rows.length - 1]!.id;
    onProgress?.({ task, done, total });
  }
}

/** The parsed messages of `id`, or undefined when a body does not parse. */
async function storedMessages(
  client: PoolClient,
  s: string,
  id: string,
): Promise<unknown[] | undefined> {
  const r = await client.query<{ body: string }>(
    `SELECT body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
    [id],
  );
  try {
    return r.rows.map((row) => JSON.parse(row.body) as unknown);
  } catch {
    return undefined;
  }
}
