// statements/commit.ts and append.ts: the sk_commit call and the append statement are
// built from ordered tables of parameters; these tests fail when sk_commit's table and the
// function as the migrations define it drift apart (name, order, type or count), or when
// the append statement and its values disagree on a parameter.
import { describe, expect, it } from 'vitest';
import { APPEND_PARAMS, appendStatementSql, appendValues } from '../src/statements/append.js';
import {
  COMMIT_PARAMS,
  callValues,
  type FunctionParam,
  namedCall,
} from '../src/statements/commit.js';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the sk_commit signature tests did not run');

/** The IN parameters of `schema.fn` as pg_proc records them: name and format_type, in order. */
async function signatureOf(schema: string, fn: string) {
  const overloads = await admin().query<{ n: number }>(
    `SELECT count(*)::integer AS n FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
     WHERE s.nspname = $1 AND p.proname = $2`,
    [schema, fn],
  );
  const r = await admin().query<{ name: string; type: string }>(
    `SELECT a.name, format_type(a.type, NULL) AS type
     FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace,
       unnest(p.proargnames,
              coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[cardinality(p.proargnames)])),
              coalesce(p.proallargtypes, p.proargtypes::oid[]))
         WITH ORDINALITY AS a(name, mode, type, o)
     WHERE s.nspname = $1 AND p.proname = $2 AND a.mode IN ('i', 'b')
     ORDER BY a.o`,
    [schema, fn],
  );
  return { overloads: overloads.rows[0]!.n, params: r.rows };
}

const tableOf = <A>(params: readonly FunctionParam<A>[]) =>
  params.map((p) => ({ name: p.name, type: p.type }));

describe.runIf(available)('statements/commit › parameter tables match pg_proc', () => {
  it('COMMIT_PARAMS is sk_commit’s signature (names, order, types); sk_append is gone', async () => {
    const store = await freshStore();
    try {
      const commit = await signatureOf(store.schema, 'sk_commit');
      expect(commit.overloads).toBe(1);
      expect(tableOf(COMMIT_PARAMS)).toEqual(commit.params);
      expect((await signatureOf(store.schema, 'sk_append')).overloads).toBe(0);
    } finally {
      await destroyStore(store);
    }
  });

  it('the append statement of every shape uses each of its values once, as PostgreSQL types them', async () => {
    const store = await freshStore();
    const c = await admin().connect();
    try {
      for (const [bodies, rows] of [
        [0, 0],
        [2, 1],
        [3, 2],
        [12, 5],
      ] as const) {
        const text = appendStatementSql(`"${store.schema}"`, bodies, rows);
        const values = appendValues({
          id: 'none',
          now: new Date(),
          bodies: Array.from({ length: bodies }, () => '{}'),
          search: {
            seqs: Array.from({ length: rows }, (_, i) => i),
            nexts: Array.from({ length: rows }, (_, i) => i + 1),
            texts: Array.from({ length: rows }, () => 'Ax'),
          },
        });
        const used = new Set([...text.matchAll(/\$(\d+)::/g)].map((m) => Number(m[1])));
        expect([...used].sort((x, y) => x - y)).toEqual(values.map((_, i) => i + 1));
        APPEND_PARAMS.forEach((p, i) => {
          expect(text, p.name).toContain(`$${i + 1}::${p.type}`);
        });
        // Prepares and runs (no such session: no row) on a real schema.
        expect((await c.query(text, values)).rows).toEqual([]);
      }
    } finally {
      c.release();
      await destroyStore(store);
    }
  });
});

describe('statements/commit › named calls', () => {
  it('passes each parameter by name, as $n of its position, cast to its type', () => {
    const text = namedCall('"x"', 'sk_commit', COMMIT_PARAMS);
    expect(text.startsWith('SELECT * FROM "x".sk_commit(p_id => $1::text, ')).toBe(true);
    COMMIT_PARAMS.forEach((p, i) => {
      expect(text).toContain(`${p.name} => $${i + 1}::${p.type}`);
    });
    expect(text.match(/=>/g)).toHaveLength(COMMIT_PARAMS.length);
    expect(new Set(COMMIT_PARAMS.map((p) => p.name)).size).toBe(COMMIT_PARAMS.length);
  });

  it('gives one value per parameter, in the table’s order', () => {
    const now = new Date(1);
    const values = appendValues({
      id: 's',
      expectedRevision: 3,
      now,
      bodies: ['{}'],
      search: { seqs: [0], nexts: [1], texts: ['\u0001x'] },
      incTurns: 1,
    });
    expect(values).toEqual(['s', 3, null, now, null, null, 1, '{}', 0, 1, '\u0001x']);
    expect(
      callValues(COMMIT_PARAMS.slice(0, 2), { id: 's', expectedRevision: 3 } as never),
    ).toEqual(['s', 3]);
  });
});
