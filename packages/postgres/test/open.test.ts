// open.ts: owned and borrowed pools, store URLs, unreachable servers.
import { inspect } from 'node:util';
import { type FullStore, isSessionKitError, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { openPostgresStore, PostgresStore, storeAdapter } from '../src/index.js';
import { POSTGRES_URL } from './env.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';

const available = postgresForFile('the open tests did not run');

/** A URL to the test server with a password in it (trust auth ignores it). */
function urlWithPassword(password: string, schema?: string): string {
  const u = new URL(POSTGRES_URL);
  u.password = password;
  if (schema) u.searchParams.set('schema', schema);
  return u.href;
}

describe.runIf(available)('open › pools, URLs and errors', () => {
  it('a borrowed pool stays open after close(); an owned one is ended', async () => {
    const pool = newPool(2);
    const schema = freshSchema();
    try {
      const borrowed = await PostgresStore.fromPool(pool, { schema });
      await borrowed.create({ id: 'b1' });
      await borrowed.close();
      await borrowed.close();
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      await expect(borrowed.load('b1')).rejects.toSatisfy((e) => isSessionKitError(e, 'closed'));
      const owned = await openPostgresStore(POSTGRES_URL, { schema });
      expect((await owned.load('b1')).id).toBe('b1');
      await owned.close();
      await owned.close();
      await expect(owned.load('b1')).rejects.toSatisfy((e) => isSessionKitError(e, 'closed'));
      // Another store on the borrowed pool still works.
      const again = new PostgresStore({ pool, schema });
      expect((await again.load('b1')).id).toBe('b1');
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });

  it('openStore opens postgres:// and postgresql:// URLs, schema from ?schema=', async () => {
    const schema = freshSchema();
    // The source build's adapter (openStore would otherwise load the package's dist).
    registerStoreAdapter(storeAdapter);
    try {
      for (const scheme of ['postgres:', 'postgresql:']) {
        const u = new URL(urlWithPassword('pw-not-needed', schema));
        u.protocol = scheme;
        const store = (await openStore(u.href)) as FullStore;
        expect(store).toBeInstanceOf(PostgresStore);
        expect((store as unknown as PostgresStore).schema).toBe(schema);
        await store.create({ id: `via-${scheme.replace(':', '')}` });
        await store.close();
      }
      const r = await admin().query(`SELECT id FROM "${schema}".sessions ORDER BY id`);
      expect(r.rows.map((x) => x.id)).toEqual(['via-postgres', 'via-postgresql']);
      await expect(
        storeAdapter.open(new URL(urlWithPassword('x', 'bad-name')), {}),
      ).rejects.toSatisfy((e) => isSessionKitError(e, 'invalid_argument'));
      await expect(storeAdapter.open(new URL(POSTGRES_URL), { nope: 1 })).rejects.toSatisfy((e) =>
        isSessionKitError(e, 'invalid_argument'),
      );
    } finally {
      await dropSchema(schema);
    }
  });

  it('an unreachable server is unavailable, and no error carries the password', async () => {
    const secret = 'S3cr3t-pa55word-never-shown';
    // Port 1 on loopback: nothing listens there.
    const url = `postgres://someone:${secret}@127.0.0.1:1/db?schema=sk_x`;
    const failures: unknown[] = [];
    await openPostgresStore(url.replace('?schema=sk_x', ''), {}).catch((e) => failures.push(e));
    await openStore(url).catch((e) => failures.push(e));
    await openStore(url.replace('127.0.0.1:1', '127.0.0.1:1:x')).catch((e) => failures.push(e));
    expect(failures).toHaveLength(3);
    expect(isSessionKitError(failures[0], 'unavailable')).toBe(true);
    expect(isSessionKitError(failures[1], 'unavailable')).toBe(true);
    for (const e of failures) {
      expect(isSessionKitError(e)).toBe(true);
      const shown = `${String(e)} ${inspect(e, { depth: 10 })} ${JSON.stringify(e)}`;
      expect(shown).not.toContain(secret);
    }
    // A borrowed pool pointing nowhere: the first call fails with unavailable, cause kept.
    const pg = await import('pg');
    const pool = new pg.default.Pool({ connectionString: url.replace('?schema=sk_x', '') });
    pool.on('error', () => {});
    try {
      const store = new PostgresStore({ pool });
      const e = await store.list().catch((x: unknown) => x);
      expect(isSessionKitError(e, 'unavailable')).toBe(true);
      expect((e as Error).cause).toBeDefined();
      expect((e as Error).message).toMatch(/^\[sessionkit\/postgres\] /);
      expect(inspect(e, { depth: 10 })).not.toContain(secret);
    } finally {
      await pool.end();
    }
  });
});
