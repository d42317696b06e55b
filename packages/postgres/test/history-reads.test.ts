// history-reads.ts: reads are one MVCC snapshot, never waiting on a writer.
import { describe, expect, it } from 'vitest';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the history-reads tests did not run');

describe.runIf(available)('history-reads › reads during an open turn', () => {
  it('load and loadMessages neither wait on an uncommitted turn nor see it', async () => {
    const store = await freshStore();
    const client = await admin().connect();
    try {
      await store.create({ id: 'busy', messages: [{ role: 'user', content: 'committed' }] });
      // An open transaction holding the row lock and new message rows, as a commit does.
      await client.query('BEGIN');
      await client.query(
        `UPDATE "${store.schema}".sessions SET revision = revision + 1, message_count = 2 WHERE id = 'busy'`,
      );
      await client.query(
        `INSERT INTO "${store.schema}".messages (session_id, seq, body) VALUES ('busy', 1, '"uncommitted"')`,
      );
      const [messages, loaded, listed] = await Promise.all([
        store.loadMessages('busy'),
        store.load('busy'),
        store.list(),
      ]);
      expect(messages).toEqual([{ role: 'user', content: 'committed' }]);
      expect(loaded.revision).toBe(1);
      expect(listed[0]?.messageCount).toBe(1);
      await client.query('ROLLBACK');
    } finally {
      client.release();
      await destroyStore(store);
    }
  });
});
