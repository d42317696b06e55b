import { type ConformanceInitializer, runConformance } from '@sessionkit/conformance';
import { describe, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { postgresAvailable } from './env.js';
import { admin, destroyStore, endAdmin, freshStore, peerOf } from './harness.js';

const q = (store: PostgresStore) => `"${store.schema}"`;

export const postgresInitializer: ConformanceInitializer<PostgresStore> = {
  name: 'postgres',
  create: () => freshStore(),
  createPeer: (store) => peerOf(store),
  destroy: (store) => destroyStore(store),
  afterAll: () => endAdmin(),
  probes: {
    // The store counts every statement that reads the messages table; the EXPLAIN test in
    // postgres.test.ts checks that listing and search plans never touch that table.
    messageBodyReads: (store) => store.stats.messageBodyReads,
  },
  faults: {
    // Derived data: the message count column and the search rows.
    damageIndex: async (store, id) => {
      await admin().query(`UPDATE ${q(store)}.sessions SET message_count = 0 WHERE id = $1`, [id]);
      await admin().query(`DELETE FROM ${q(store)}.search_rows WHERE session_id = $1`, [id]);
    },
    // Authoritative data: a message body that is no longer JSON.
    corruptSession: async (store, id) => {
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
