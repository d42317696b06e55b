// Schema version 11: `search_chunks` has storage only under search scope `messages` (see
// search-chunks-table.ts). A `titles` or `none` schema never searches message text, so
// its chunk rows (none, unless a store of the old scope wrote some) are dropped with the
// table; a later scope change to `messages` creates the table again and rebuilds every
// session's text from its messages.
import type { PoolClient } from 'pg';
import { shapeChunksFor } from '../search-chunks-table.js';
import { readSearchScope } from '../search-scope.js';
import type { Migration } from './migration.js';

/** Version 11's step: `search_chunks` shaped for the recorded scope. */
async function chunksByScope(client: PoolClient, s: string): Promise<void> {
  await shapeChunksFor(client, s, await readSearchScope(client, s));
}

/** Version 11 of the schema (see `chunksByScope`); no SQL of its own. */
export const migration011: Migration = {
  version: 11,
  name: 'chunks_by_scope',
  sql: () => '',
  run: chunksByScope,
};
