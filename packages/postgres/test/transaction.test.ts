// transaction.ts: statements and transactions with retries on borrowed clients.
import { isSessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { admin, borrowedStore, postgresForFile } from './harness.js';

const available = postgresForFile('the transaction tests did not run');

describe.runIf(available)('transaction › a client broken inside a transaction', () => {
  it('a checked-out client terminated between statements of a transaction never crashes the process', async () => {
    const { pool, store, dispose } = await borrowedStore();
    const crashes: unknown[] = [];
    const onUncaught = (e: unknown) => crashes.push(e);
    // Vitest installs its own listener; ours records what would otherwise kill the process.
    process.on('uncaughtException', onUncaught);
    try {
      await store.create({ id: 'p', messages: [{ role: 'user', content: 'a' }] });
      // Every transaction's backend is terminated right after BEGIN, while the client is
      // checked out and idle in the transaction (no query active to take the error).
      const connect = pool.connect.bind(pool);
      let sabotage = true;
      (pool as { connect: unknown }).connect = async () => {
        const client = await connect();
        const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
        (client as { query: unknown }).query = async (...args: unknown[]) => {
          const out = await query(...args);
          if (sabotage && args[0] === 'BEGIN') {
            const r = (await query('SELECT pg_backend_pid() AS pid')) as {
              rows: { pid: number }[];
            };
            await admin().query('SELECT pg_terminate_backend($1)', [r.rows[0]!.pid]);
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
          return out;
        };
        return client;
      };
      const e = await store.branch('p', 1).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isSessionKitError(e, 'unavailable')).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(crashes).toEqual([]);
      sabotage = false;
      expect((await store.branch('p', 1)).parentId).toBe('p');
    } finally {
      process.off('uncaughtException', onUncaught);
      await dispose();
    }
  });
});
