// A server crash right after a search indexing pass, on a PRIVATE instance this test starts
// (the shared server is never touched). A pass commits without waiting for the disk
// (search-indexer.ts), so the crash can undo it: its rows are pending again, and the
// indexer, which remembered the words the pass wrote, must not trust that memory on the
// connections opened after the crash, or the next pass would skip those words and search
// would miss what was committed.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/index.js';
import { PrivateServer, privateServersAvailable } from './private-server.js';

const hasBinaries = privateServersAvailable();

describe.runIf(hasBinaries)('postgres › a server crash right after an indexing pass', () => {
  const server = new PrivateServer();
  beforeAll(() => server.init(), 120_000);
  afterAll(() => server.destroy(), 120_000);

  it('the undone pass is indexed again, words included: search finds what was committed', async () => {
    const url = server.url();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // Only the WAL writer writes an asynchronous commit's record (within ~200 ms, at once
    // if it was idle long enough to hibernate): stopped, it writes nothing before the
    // immediate stop below, so the crash reliably undoes the pass. The server's immediate
    // shutdown kills it (SIGKILL after 5 s), stopped or not.
    const walWriter = await admin.query(
      `SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'`,
    );
    await admin.end();
    const store = await openPostgresStore(url, { schema: 'sk_crash' });
    try {
      await store.create({ id: 'c1', messages: [{ role: 'user', content: 'a first message' }] });
      await store.indexPendingSearch();
      // A synchronous commit: the first pass is on disk now.
      process.kill(walWriter.rows[0].pid, 'SIGSTOP');
      await store.commit('c1', { append: [{ role: 'user', content: 'the quokkaxyz word' }] });
      expect(await store.indexPendingSearch()).toBe(1);
      await server.stop('immediate');
      await server.start();

      const check = new pg.Client({ connectionString: url });
      await check.connect();
      try {
        // The crash undid the pass: its row is pending again (else this test shows nothing).
        const pending = await check.query(
          `SELECT count(*)::int AS n FROM sk_crash.search_pending WHERE session_id = 'c1'`,
        );
        expect(pending.rows[0].n).toBe(1);
        expect((await store.list({ query: 'quokkaxyz' })).map((s) => s.id)).toEqual(['c1']);
        expect(await store.indexPendingSearch()).toBe(1);
        const words = await check.query(
          `SELECT count(*)::int AS n FROM sk_crash.search_words
           WHERE session_id = 'c1' AND block = 0 AND words LIKE '% quokkaxyz %'`,
        );
        expect(words.rows[0].n).toBe(1);
      } finally {
        await check.end();
      }
      // Indexed, not pending: found through its block's words.
      expect((await store.list({ query: 'quokkaxyz' })).map((s) => s.id)).toEqual(['c1']);
      expect((await store.list({ query: 'first message' })).map((s) => s.id)).toEqual(['c1']);
    } finally {
      await store.close();
    }
  }, 120_000);
});
