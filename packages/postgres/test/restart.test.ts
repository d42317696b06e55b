// A PostgreSQL restart in the middle of a run, on a PRIVATE instance this test starts (the
// shared server is never touched): an operation in flight when the server stops fails with
// `unavailable`; after the server is back, the SAME store works again.
import { isSessionKitError } from '@sessionkit/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../src/index.js';
import { PrivateServer, privateServersAvailable } from './private-server.js';

const hasBinaries = privateServersAvailable();

describe.runIf(hasBinaries)('postgres › a server restart mid-run', () => {
  const server = new PrivateServer();
  beforeAll(() => server.init(), 120_000);
  afterAll(() => server.destroy(), 120_000);

  it('an in-flight commit fails with unavailable; the same store works after the restart', async () => {
    const url = server.url();
    const store: PostgresStore = await openPostgresStore(url, { schema: 'sk_restart' });
    const blocker = new pg.Client({ connectionString: url });
    blocker.on('error', () => {});
    try {
      await store.create({ id: 'r1', messages: [{ role: 'user', content: 'before' }] });
      // Hold the session's row lock so the commit below is really in flight at the stop.
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query(`SELECT id FROM sk_restart.sessions WHERE id = 'r1' FOR UPDATE`);
      const inFlight = store
        .commit('r1', { append: [{ role: 'assistant', content: 'lost' }] })
        .then(
          () => 'resolved',
          (e: unknown) => e,
        );
      for (let i = 0; i < 200; i++) {
        const r = await blocker.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`,
        );
        if (r.rows[0].n > 0) break;
        await new Promise((res) => setTimeout(res, 25));
      }
      await server.stop('immediate');
      const failure = await inFlight;
      expect(isSessionKitError(failure, 'unavailable')).toBe(true);
      expect((failure as { retryable?: boolean }).retryable).toBe(true);
      // While the server is down every call fails the same way, and nothing crashes.
      const down = await store.load('r1').catch((e: unknown) => e);
      expect(isSessionKitError(down, 'unavailable')).toBe(true);

      await server.start();
      // The same store, the same pool: broken clients were discarded.
      const loaded = await store.load('r1');
      expect(loaded.messages).toEqual([{ role: 'user', content: 'before' }]);
      expect(loaded.revision).toBe(1);
      const r = await store.commit('r1', {
        expectedRevision: 1,
        append: [{ role: 'assistant', content: 'after' }],
      });
      expect(r.revision).toBe(2);
      expect((await store.list()).map((s) => s.id)).toEqual(['r1']);

      // A graceful (fast) restart while idle: the idle clients die; the store recovers too.
      await server.stop('fast');
      await server.start();
      expect((await store.loadMessages('r1')).length).toBe(2);
    } finally {
      await blocker.end().catch(() => {});
      await store.close();
    }
  });
});

describe.runIf(hasBinaries)('postgres › without pg_trgm (private instance)', () => {
  const server = new PrivateServer();
  beforeAll(() => server.init(), 120_000);
  afterAll(() => server.destroy(), 120_000);

  it('a role that may not create the extension still gets working search, indexed once it exists', async () => {
    const superUrl = server.url();
    const appUrl = server.url('app');
    const su = new pg.Client({ connectionString: superUrl });
    su.on('error', () => {});
    await su.connect();
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === 'SESSIONKIT_PG_NO_TRGM') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      // A DBA-made schema owned by a role without CREATE on the database: it can neither
      // create schemas nor (trusted) extensions.
      await su.query('CREATE ROLE app LOGIN');
      await su.query('CREATE SCHEMA app_sessions AUTHORIZATION app');
      const store = await openPostgresStore(appUrl, { schema: 'app_sessions' });
      await store.create({
        id: 'n1',
        title: 'Zebra notes',
        messages: [{ role: 'user', content: 'ok' }],
      });
      expect((await store.list({ query: 'zebra' })).map((s) => s.id)).toEqual(['n1']);
      const idx = async () =>
        (
          await su.query(
            `SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = 'app_sessions' AND indexname = 'search_words_trgm'`,
          )
        ).rows[0].n;
      expect(await idx()).toBe(0);
      await new Promise((r) => setTimeout(r, 10));
      expect(warnings.some((w) => w.includes('pg_trgm is not available'))).toBe(true);
      await store.close();
      // Once a superuser installs the extension, the next open builds the index.
      await su.query('CREATE EXTENSION pg_trgm');
      const again = await openPostgresStore(appUrl, { schema: 'app_sessions' });
      expect(await idx()).toBe(1);
      expect((await again.list({ query: 'zebra' })).map((s) => s.id)).toEqual(['n1']);
      await again.close();
    } finally {
      process.off('warning', onWarning);
      await su.end();
    }
  });
});
