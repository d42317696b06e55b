// Schema version 8 applied to a schema created and written by version 7 (the previous
// release): its sessions take commits with operation ids and truncate at once, and the
// text of message parts — which the previous release did not index — is found once
// `repair()` has rebuilt the search data (the upgrade itself does not read message bodies).
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { schemaAtVersion } from './old-schema.js';

const available = postgresForFile('the PostgreSQL migration 8 test did not run');

/** A UI message of the AI SDK: its text only in `parts`. */
interface UiMessage {
  id: string;
  role: string;
  parts: { type: string; text: string }[];
}
const partsMessage = (id: string, text: string): UiMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

describe.runIf(available)('postgres › migration 8', () => {
  it('upgrades a version 7 store: operation ids and truncate work, repair() indexes parts text', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    const c = await admin().connect();
    try {
      await schemaAtVersion(c, s, 7);
      // What version 7 wrote for a session of parts messages: the rows, and no search text
      // (its message text read string content only).
      await c.query(
        `INSERT INTO ${s}.sessions (id, title, created_at, updated_at, message_count)
         VALUES ('old', 'Old chat', now(), now(), 2)`,
      );
      await c.query(
        `INSERT INTO ${s}.messages (session_id, seq, body) VALUES ($1, 0, $2), ($1, 1, $3)`,
        [
          'old',
          JSON.stringify(partsMessage('m1', 'the zanzibar plan')),
          JSON.stringify(partsMessage('m2', 'a quokka reply')),
        ],
      );
    } finally {
      c.release();
    }
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool<UiMessage>(pool, { schema });
      expect(await store.list({ query: 'zanzibar' })).toEqual([]);
      const report = await store.repair();
      expect(report.skippedCorrupt).toEqual([]);
      expect((await store.list({ query: 'zanzibar' })).map((x) => x.id)).toEqual(['old']);
      const first = await store.commit('old', {
        truncate: 1,
        append: [partsMessage('m3', 'a wombat instead')],
        operationId: 'op-1',
      });
      expect(first.messageCount).toBe(2);
      // The repeat writes nothing and answers as the first commit did.
      expect(await store.commit('old', { truncate: 1, operationId: 'op-1' })).toEqual(first);
      expect(await store.list({ query: 'quokka' })).toEqual([]);
      expect((await store.list({ query: 'wombat' })).map((x) => x.id)).toEqual(['old']);
      expect((await store.loadMessages('old')).map((m) => m.id)).toEqual(['m1', 'm3']);
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
