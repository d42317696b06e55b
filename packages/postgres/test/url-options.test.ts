// Store URL query parameters: schema and connect_timeout honoured, pg's documented
// connection parameters passed on, anything else rejected naming it.
import { randomBytes } from 'node:crypto';
import { isSessionKitError, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { type PostgresStore, storeAdapter } from '../src/index.js';
import { parseStoreUrl } from '../src/url-options.js';
import { POSTGRES_URL } from './env.js';
import { admin, dropSchema, freshSchema, postgresForFile } from './harness.js';

const available = postgresForFile('the PostgreSQL URL option tests did not run');

function withParams(params: Record<string, string>): string {
  const u = new URL(POSTGRES_URL);
  for (const [k, v] of Object.entries(params)) u.searchParams.append(k, v);
  return u.href;
}

describe('postgres › store URL parameters (parsing)', () => {
  it('rejects unknown, repeated and malformed parameters, naming them', () => {
    const bad: [string, RegExp][] = [
      [
        'postgres://h/db?bogus=1',
        /unknown URL parameter "bogus".*known: schema, connect_timeout, search/,
      ],
      ['postgres://h/db?schema=a&schema=b', /"schema" is given more than once/],
      ['postgres://h/db?connect_timeout=soon', /"connect_timeout" must be a non-negative integer/],
      ['postgres://h/db?statement_timeout=-1', /"statement_timeout" must be/],
      ['postgres://h/db?max=5', /unknown URL parameter "max"/],
    ];
    for (const [url, message] of bad) {
      let error: unknown;
      try {
        parseStoreUrl(new URL(url));
      } catch (e) {
        error = e;
      }
      expect(isSessionKitError(error, 'invalid_argument'), url).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('takes schema and connect_timeout out of the URL and passes the rest to pg', () => {
    const { config, schema } = parseStoreUrl(
      new URL(
        'postgres://u:p@h:5/db?schema=s1&connect_timeout=3&sslmode=disable&application_name=x',
      ),
    );
    expect(schema).toBe('s1');
    expect(config.connectionTimeoutMillis).toBe(3000);
    const passed = new URL(config.connectionString!);
    expect([...passed.searchParams.keys()].sort()).toEqual(['application_name', 'sslmode']);
    expect(passed.password).toBe('p');
  });
});

describe.runIf(available)('postgres › store URL parameters (openStore)', () => {
  it('?schema= is honoured, a pg parameter reaches the server, ?bogus=1 is rejected before connecting', async () => {
    registerStoreAdapter(storeAdapter);
    const schema = freshSchema();
    const app = `sk_url_${randomBytes(3).toString('hex')}`;
    const store = (await openStore(withParams({ schema, application_name: app }))) as PostgresStore;
    try {
      expect(store.schema).toBe(schema);
      await store.create({ id: 'u', messages: [] });
      const r = await admin().query(`SELECT count(*)::int AS n FROM "${schema}".sessions`);
      expect(r.rows[0].n).toBe(1);
      const apps = await admin().query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`,
        [app],
      );
      expect(apps.rows[0].n).toBeGreaterThan(0);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
    const e = await openStore(withParams({ bogus: '1' })).catch((x: unknown) => x);
    expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
    expect((e as Error).message).toContain('"bogus"');
  });
});
