import { type ConformanceInitializer, runConformance } from '@sessionkit/conformance';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { describe, it } from 'vitest';
import { type PostgresStore, storeAdapter } from '../src/index.js';
import { POSTGRES_URL, postgresAvailable } from './env.js';
import {
  admin,
  destroyStore,
  dropSchema,
  endAdmin,
  freshSchema,
  freshStore,
  peerOf,
} from './harness.js';

// openStore finds postgres: URLs itself (the built package); registering the source's
// adapter makes the open-store spec test this code.
registerStoreAdapter(storeAdapter);

/** Schemas the open-store spec created through URLs, dropped when the suite ends. */
const urlSchemas: string[] = [];

/** The test server's URL on a fresh schema (`?schema=`), as an application would open it. */
function openUrl(): string {
  const schema = freshSchema();
  urlSchemas.push(schema);
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.href;
}

const q = (store: PostgresStore) => `"${store.schema}"`;

export const postgresInitializer: ConformanceInitializer<PostgresStore> = {
  name: 'postgres',
  create: () => freshStore(),
  createPeer: (store) => peerOf(store),
  destroy: (store) => destroyStore(store),
  afterAll: async () => {
    for (const schema of urlSchemas.splice(0)) await dropSchema(schema);
    await endAdmin();
  },
  openUrl,
  probes: {
    // The store counts every statement that reads the messages table; the EXPLAIN test in
    // listing.test.ts checks that listing and search plans never touch that table.
    messageBodyReads: (store) => store.stats.messageBodyReads,
  },
  faults: {
    // Derived data: the message count column, the title as search reads it, and the
    // search rows (chunks, block words, pending rows).
    damageIndex: async (store, id, _kind) => {
      await admin().query(
        `UPDATE ${q(store)}.sessions SET message_count = 0, title_search = '' WHERE id = $1`,
        [id],
      );
      for (const table of ['search_chunks', 'search_words', 'search_pending']) {
        await admin().query(`DELETE FROM ${q(store)}.${table} WHERE session_id = $1`, [id]);
      }
    },
    // Authoritative data: a message body that is no longer JSON.
    corruptSession: async (store, id, _kind) => {
      const r = await admin().query(
        `UPDATE ${q(store)}.messages SET body = '{"role": "user", "content": ' WHERE session_id = $1 AND seq = 0`,
        [id],
      );
      if (r.rowCount !== 1) throw new Error(`no message row to corrupt for ${id}`);
    },
  },
};

if (postgresAvailable('the conformance suite did not run')) {
  runConformance(postgresInitializer);
} else {
  describe('postgres › conformance', () => {
    it.skip('needs PostgreSQL (see the warning above)', () => {});
  });
}
