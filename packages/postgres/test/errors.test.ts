// errors.ts: driver errors mapped to sessionkit errors, and what a store reports when its schema is gone.
import { isSessionKitError } from '@sessionkit/core';
import { describe, expect, it } from 'vitest';
import { driverErrorCode, errors, wrapDriverError } from '../src/errors.js';
import { PostgresStore } from '../src/index.js';
import { borrowedStore, dropSchema, postgresForFile } from './harness.js';

const available = postgresForFile('the errors tests did not run');

/** A fake driver error with a SQLSTATE (pg's DatabaseError has `code` and `severity`). */
function pgError(code: string, message = `fake ${code}`): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' });
}

describe('errors › driver errors to sessionkit errors', () => {
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

describe.runIf(available)('errors › schema dropped under an open store', () => {
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
