// Regression tests: error mapping, crash safety, lock ordering, search across row cuts, timestamps.
import { isSessionKitError } from '@sessionkit/core';
import { searchTextMatches, searchTextOf } from '@sessionkit/core/adapter';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { driverErrorCode, errors, wrapDriverError } from '../src/errors.js';
import { PostgresStore } from '../src/index.js';
import { MIGRATIONS } from '../src/schema.js';
import { POSTGRES_URL, postgresAvailable } from './env.js';
import { admin, borrowedStore, dropSchema, endAdmin, freshSchema, newPool } from './harness.js';

const available = postgresAvailable('the PostgreSQL regression tests did not run');

afterAll(async () => {
  if (available) await endAdmin();
});

describe.runIf(available)('postgres › regressions: crash safety', () => {
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

/** A fake driver error with a SQLSTATE (pg's DatabaseError has `code` and `severity`). */
function pgError(code: string, message = `fake ${code}`): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' });
}

describe('postgres › regressions: error mapping', () => {
  const cases: [string, Error, string][] = [
    [
      'connection refused (errno)',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      'unavailable',
    ],
    [
      'socket reset',
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      'unavailable',
    ],
    [
      'connection terminated (no code)',
      new Error('Connection terminated unexpectedly'),
      'unavailable',
    ],
    [
      'pool connect timeout (no code)',
      new Error('timeout exceeded when trying to connect'),
      'unavailable',
    ],
    ['08006 connection failure', pgError('08006'), 'unavailable'],
    ['57P01 admin shutdown', pgError('57P01'), 'unavailable'],
    ['57014 statement timeout', pgError('57014'), 'unavailable'],
    ['53300 too many connections', pgError('53300'), 'unavailable'],
    ['53100 disk full', pgError('53100'), 'unavailable'],
    ['58030 io error', pgError('58030'), 'unavailable'],
    ['55P03 lock timeout', pgError('55P03'), 'unavailable'],
    ['25P03 idle in transaction timeout', pgError('25P03'), 'unavailable'],
    ['40P01 deadlock after retries', pgError('40P01'), 'unavailable'],
    ['40001 serialization failure after retries', pgError('40001'), 'unavailable'],
    ['22P05 untranslatable character', pgError('22P05'), 'invalid_argument'],
    [
      'connection string pg cannot parse',
      Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL' }),
      'invalid_argument',
    ],
    ['22021 bad encoding', pgError('22021'), 'invalid_argument'],
    ['54000 program limit', pgError('54000'), 'too_large'],
    ['28P01 wrong password', pgError('28P01'), 'invalid_argument'],
    ['28000 unknown role', pgError('28000'), 'invalid_argument'],
    ['3D000 missing database', pgError('3D000'), 'invalid_argument'],
    ['42P01 missing table', pgError('42P01'), 'corrupt'],
    ['42883 missing function', pgError('42883'), 'corrupt'],
    ['3F000 missing schema', pgError('3F000'), 'corrupt'],
    ['42703 missing column', pgError('42703'), 'corrupt'],
    ['42501 permission denied', pgError('42501'), 'corrupt'],
    ['XX000 internal error', pgError('XX000'), 'corrupt'],
    ['23505 unexpected unique violation', pgError('23505'), 'corrupt'],
  ];
  for (const [name, e, code] of cases) {
    it(`${name} → ${code}, cause kept, SQLSTATE named`, () => {
      expect(driverErrorCode(e)).toBe(code);
      const w = wrapDriverError(e, 'load', 'myschema');
      expect(isSessionKitError(w, code as never)).toBe(true);
      expect(w.cause).toBe(e);
      expect(w.message).toMatch(/^\[sessionkit\/postgres\] /);
      expect(w.message).toContain(e.message);
      const state = (e as { code?: string }).code ?? '';
      if (/^[0-9A-Z]{5}$/.test(state)) expect(w.message).toContain(state);
      expect(w.retryable).toBe(code === 'unavailable');
    });
  }

  it('a missing object names the schema and what to do', () => {
    const w = wrapDriverError(
      pgError('42P01', 'relation "myschema.sessions" does not exist'),
      'load',
      'myschema',
    );
    expect(w.message).toContain('schema "myschema" is missing');
    expect(w.message).toContain('dropped');
  });

  it('a SessionKitError passes through unchanged', () => {
    const e = errors.notFound('x');
    expect(wrapDriverError(e, 'load')).toBe(e);
  });
});

describe.runIf(available)('postgres › regressions: schema dropped under an open store', () => {
  it('every call fails with a clear corrupt error naming the missing schema, never unavailable', async () => {
    const { schema, pool, store, dispose } = await borrowedStore();
    try {
      await store.create({ id: 'a', messages: [{ role: 'user', content: 'hi' }] });
      await store.load('a');
      await store.commit('a', { append: [{ role: 'assistant', content: 'yo' }] });
      await dropSchema(schema);
      const calls: [string, () => Promise<unknown>][] = [
        ['load', () => store.load('a')],
        ['loadMessages', () => store.loadMessages('a')],
        ['commit', () => store.commit('a', { append: [{ role: 'user', content: 'x' }] })],
        ['list', () => store.list()],
        ['delete', () => store.delete('a')],
      ];
      for (const [name, call] of calls) {
        const e = await call().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(isSessionKitError(e, 'corrupt'), name).toBe(true);
        const message = (e as Error).message;
        expect(message).toContain(`schema "${schema}" is missing`);
        expect(message).toMatch(/42P01|42883|3F000/);
        expect((e as Error).cause).toBeDefined();
      }
      // A new store on the same pool recreates the schema.
      const again = await PostgresStore.fromPool(pool, { schema });
      expect(await again.list()).toEqual([]);
    } finally {
      await dispose();
    }
  });
});

describe.runIf(available)('postgres › regressions: lock ordering', () => {
  it('a merge into a parent that is being deleted never deadlocks with the promotion', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const blocker = await admin().connect();
    try {
      await store.create({ id: 'p', messages: [{ role: 'user', content: 'a' }] });
      const child = await store.branch('p', 1);
      await store.commit(child.id, { append: [{ role: 'assistant', content: 'b' }] });
      // Hold a share lock on the child: the delete of the parent locks the parent and then
      // waits to re-parent the child.
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${schema}".sessions WHERE id = $1 FOR SHARE`, [child.id]);
      const waiting = async (pattern: string) => {
        for (let i = 0; i < 500; i++) {
          const r = await admin().query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
            [pattern],
          );
          if (r.rowCount) return;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        throw new Error(`no backend waiting on ${pattern}`);
      };
      const deleting = store.delete('p').then(
        () => 'deleted',
        (e: unknown) => e,
      );
      await waiting('%WHERE parent_id = $1 AND id <> $1 ORDER BY id FOR UPDATE%');
      const merging = store.merge(child.id).then(
        (s) => s.id,
        (e: unknown) => e,
      );
      // The merge is now waiting for the parent (held by the delete).
      await waiting(`%"${schema}".sessions AS x WHERE x.id = $1 FOR UPDATE%`);
      await blocker.query('COMMIT');
      const [d, m] = await Promise.all([deleting, merging]);
      expect(d).toBe('deleted');
      // The parent is gone and the child promoted to a root: nothing to merge into.
      expect(isSessionKitError(m, 'invalid_argument')).toBe(true);
      expect((await store.load(child.id)).parentId).toBeUndefined();
      expect(store.stats.txRetries).toBe(0);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await dispose();
    }
  });
});

describe.runIf(available)('postgres › regressions: delete promotion races', () => {
  it('deleting a session and its parent at once never leaves a grandchild pointing at a deleted session', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const blocker = await admin().connect();
    try {
      await store.create({ id: 'p', messages: [] });
      await store.create({ id: 'c', parentId: 'p', messages: [] });
      await store.create({ id: 'g', parentId: 'c', messages: [] });
      // Hold the grandchild so delete('c') stops just before re-parenting it.
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${schema}".sessions WHERE id = 'g' FOR SHARE`);
      const waiters = async (n: number) => {
        for (let i = 0; i < 500; i++) {
          // delete('c') waits to lock the grandchild; delete('p') waits in sk_delete_lock
          // for the parent lock delete('c') holds.
          const r = await admin().query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'
             AND (query LIKE $1 OR query LIKE $2)`,
            [
              `%"${schema}".sk_delete_lock%`,
              '%WHERE parent_id = $1 AND id <> $1 ORDER BY id FOR UPDATE%',
            ],
          );
          if ((r.rowCount ?? 0) >= n) return;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        throw new Error(`fewer than ${n} deletes waiting`);
      };
      const deleteChild = store.delete('c');
      await waiters(1);
      const deleteParent = store.delete('p');
      await waiters(2);
      await blocker.query('COMMIT');
      await Promise.all([deleteChild, deleteParent]);
      const g = await store.load('g');
      expect(g.parentId).toBeUndefined();
      const rows = await admin().query(
        `SELECT id FROM "${schema}".sessions AS s WHERE parent_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM "${schema}".sessions AS p WHERE p.id = s.parent_id)`,
      );
      expect(rows.rows).toEqual([]);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await dispose();
    }
  });
});

describe.runIf(available)('postgres › regressions: migration 2', () => {
  it('a schema at version 1 with data is upgraded in place on open', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    const c = await admin().connect();
    try {
      await c.query(`CREATE SCHEMA ${s}`);
      await c.query(
        `CREATE TABLE ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      await c.query(MIGRATIONS[0]!.sql(s));
      await c.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES (1, 'initial')`);
      await c.query(
        `INSERT INTO ${s}.sessions (id, created_at, updated_at) VALUES ('old', now(), now())`,
      );
    } finally {
      c.release();
    }
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      const versions = await admin().query(
        `SELECT version FROM ${s}.schema_migrations ORDER BY version`,
      );
      expect(versions.rows.map((r: { version: number }) => r.version)).toEqual(
        MIGRATIONS.map((m) => m.version),
      );
      const def = await admin().query(`SELECT pg_get_functiondef(to_regprocedure($1)) AS d`, [
        `${s}.sk_delete_lock(text)`,
      ]);
      expect(def.rows[0].d).toContain('FOR KEY SHARE');
      expect((await store.load('old')).id).toBe('old');
      await store.create({ id: 'kid', parentId: 'old' });
      await store.delete('old');
      expect((await store.load('kid')).parentId).toBeUndefined();
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});

describe.runIf(available)('postgres › regressions: search never spans two messages', () => {
  it('a query straddling two messages matches neither within one search row nor across a row cut', async () => {
    const { schema, store, dispose } = await borrowedStore();
    try {
      await store.create({ id: 's', messages: [] });
      // Two short messages in one commit share one search row.
      await store.commit('s', {
        append: [
          { role: 'user', content: 'first needle' },
          { role: 'assistant', content: 'haystack second' },
        ],
      });
      // Over 64 KB in one commit: the second message starts a new search row.
      const before = `${'x'.repeat(66_000)} tail`;
      await store.commit('s', {
        append: [
          { role: 'user', content: before },
          { role: 'assistant', content: 'head more' },
        ],
      });
      const rows = await admin().query(`SELECT seq FROM "${schema}".search_rows ORDER BY seq`);
      expect(rows.rows.map((r: { seq: number }) => r.seq)).toEqual([0, 2, 3]);
      const history = searchTextOf(await store.loadMessages('s'));
      for (const [query, found] of [
        ['needle', true],
        ['haystack', true],
        ['needle\nhaystack', false],
        ['needlehaystack', false],
        ['needle haystack', false],
        ['tail head', false],
        ['tail\nhead', false],
        ['tail', true],
        ['head more', true],
      ] as const) {
        expect(searchTextMatches(history, query)).toBe(found);
        expect((await store.list({ query })).map((x) => x.id)).toEqual(found ? ['s'] : []);
      }
      expect((await store.repair()).indexEntriesFixed).toBe(0);
    } finally {
      await dispose();
    }
  });
});

describe.runIf(available)('postgres › regressions: enforceMax races', () => {
  it('a root that a commit makes the newest while enforceMax waits for its lock is kept', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const blocker = await admin().connect();
    try {
      await store.create({ id: 'a', messages: [] });
      await store.create({ id: 'b', messages: [] });
      await store.commit('b', { append: [{ role: 'user', content: 'newer' }] });
      // A turn on 'a' in flight: its row is locked and it becomes the newest on commit.
      await blocker.query('BEGIN');
      await blocker.query(
        `UPDATE "${schema}".sessions SET updated_at = now() + interval '1 hour', revision = revision + 1 WHERE id = 'a'`,
      );
      const pruning = store.enforceMax(1);
      for (let i = 0; ; i++) {
        const r = await admin().query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [`%"${schema}".sk_enforce_max%`],
        );
        if (r.rowCount) break;
        if (i > 500) throw new Error('enforceMax never waited');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await blocker.query('COMMIT');
      expect(await pruning).toBe(0);
      expect((await store.load('a')).revision).toBe(2);
      // The next pass removes the root that is now the oldest.
      expect(await store.enforceMax(1)).toBe(1);
      expect((await store.list()).map((x) => x.id)).toEqual(['a']);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
      await dispose();
    }
  });
});

describe.runIf(available)('postgres › regressions: session TimeZone', () => {
  it('load returns exact dates whatever the connection TimeZone, even offsets with seconds', async () => {
    const schema = freshSchema();
    const store = await PostgresStore.fromPool(newPool(), { schema });
    await store.create({ id: 'tz', messages: [] });
    await store.close();
    for (const zone of ['Europe/Amsterdam', 'Asia/Kolkata', 'America/St_Johns', 'UTC']) {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, options: `-c TimeZone=${zone}` });
      const zoned = await PostgresStore.fromPool(pool, { schema });
      try {
        // 1935 Amsterdam was UTC+00:19:32; 1900 Kolkata UTC+05:53:28.
        for (const iso of [
          '1935-06-01T12:34:56.789Z',
          '1900-01-01T00:00:00.001Z',
          '2024-02-29T23:59:59.999Z',
        ]) {
          const id = `tz-${zone.replace(/\W/g, '-')}-${iso.slice(0, 4)}`;
          const at = new Date(iso);
          await zoned.create({ id, messages: [], createdAt: at, updatedAt: at });
          const loaded = await zoned.load(id);
          expect(loaded.createdAt.toISOString(), `${zone} ${iso}`).toBe(iso);
          expect(loaded.updatedAt.toISOString(), `${zone} ${iso}`).toBe(iso);
        }
      } finally {
        await zoned.close();
        await pool.end();
      }
    }
    await dropSchema(schema);
  });
});

describe.runIf(available)('postgres › regressions: enforceMax locks only its victims', () => {
  it('a retention pass left open in a transaction does not block commits to the roots it keeps', async () => {
    const { schema, store, dispose } = await borrowedStore();
    const pass = await admin().connect();
    const writer = await admin().connect();
    try {
      await store.create({ id: 'old', messages: [] });
      await store.create({ id: 'kept', messages: [] });
      await store.commit('kept', { append: [{ role: 'user', content: 'newer' }] });
      await pass.query('BEGIN');
      const r = await pass.query(`SELECT "${schema}".sk_enforce_max(1) AS n`);
      expect(r.rows[0].n).toBe(1);
      // The pass still holds its locks: an update of the kept root must not wait for them.
      await writer.query(`SET lock_timeout = '2s'`);
      const u = await writer
        .query(`UPDATE "${schema}".sessions SET title = 'touched' WHERE id = 'kept'`)
        .catch((e: unknown) => e);
      expect(u instanceof Error ? (u as { code?: string }).code : 'ok').toBe('ok');
      await pass.query('COMMIT');
      expect((await store.list()).map((x) => [x.id, x.title])).toEqual([['kept', 'touched']]);
    } finally {
      await pass.query('ROLLBACK').catch(() => {});
      pass.release();
      await writer.query('RESET lock_timeout').catch(() => {});
      writer.release();
      await dispose();
    }
  });
});

describe.runIf(available)('postgres › regressions: millisecond timestamps', () => {
  it('every timestamp column keeps milliseconds only, so keyset cursors compare what callers see', async () => {
    const { schema, store, dispose } = await borrowedStore();
    try {
      const cols = await admin().query<{ table_name: string; column_name: string; p: number }>(
        `SELECT table_name, column_name, datetime_precision AS p FROM information_schema.columns
         WHERE table_schema = $1 AND data_type = 'timestamp with time zone'
           AND table_name <> 'schema_migrations'`,
        [schema],
      );
      expect(cols.rows.length).toBeGreaterThan(0);
      for (const c of cols.rows) expect(`${c.table_name}.${c.column_name}:${c.p}`).toMatch(/:3$/);
      // Even a microsecond value written behind the store comes back as whole milliseconds,
      // and a keyset page after it starts exactly after it.
      await store.create({ id: 'a' });
      await store.create({ id: 'b' });
      await admin().query(
        `UPDATE "${schema}".sessions SET updated_at = '2026-01-01 00:00:00.123456+00' WHERE id = 'a'`,
      );
      const [first] = await store.list({ limit: 1, oldestFirst: true });
      expect(first!.id).toBe('a');
      expect(first!.updatedAt.toISOString()).toBe('2026-01-01T00:00:00.123Z');
      const next = await store.list({
        oldestFirst: true,
        startAfter: { updatedAt: first!.updatedAt, id: first!.id },
      });
      expect(next.map((x) => x.id)).toEqual(['b']);
    } finally {
      await dispose();
    }
  });
});
