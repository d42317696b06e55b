// statements/commit.ts: the sk_commit call and the append statement are built from one
// ordered table of parameters each; these tests fail when sk_commit's table and the
// function as the migrations define it drift apart (name, order, type or count), or when
// the append statement refers to a parameter out of its table.
import { describe, expect, it } from 'vitest';
import {
  APPEND_PARAMS,
  appendStatementSql,
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

  it('the append statement uses every parameter of APPEND_PARAMS, each as $n of its position and type', async () => {
    const text = appendStatementSql('"x"');
    APPEND_PARAMS.forEach((p, i) => {
      expect(text, p.name).toContain(`$${i + 1}::${p.type}`);
    });
    const used = new Set([...text.matchAll(/\$(\d+)::/g)].map((m) => Number(m[1])));
    expect([...used].sort((a, b) => a - b)).toEqual(APPEND_PARAMS.map((_, i) => i + 1));
    // PostgreSQL agrees on the types: the statement prepares on a real schema.
    const store = await freshStore();
    try {
      const c = await admin().connect();
      try {
        await c.query({
          name: 'append_check',
          text: appendStatementSql(`"${store.schema}"`),
          values: callValues(APPEND_PARAMS, {
            id: 'none',
            now: new Date(),
            bodies: [],
            search: { seqs: [], nexts: [], texts: [] },
          }),
        });
      } finally {
        c.release();
      }
    } finally {
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
    const values = callValues(APPEND_PARAMS, {
      id: 's',
      expectedRevision: 3,
      now,
      bodies: ['{}'],
      search: { seqs: [0], nexts: [1], texts: ['\u0001x'] },
      incTurns: 1,
    });
    expect(values).toEqual(['s', 3, null, ['{}'], [0], [1], ['\u0001x'], now, null, null, 1]);
  });
});
