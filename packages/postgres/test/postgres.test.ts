import { inspect } from 'node:util';
import { type FullStore, isSessionKitError, openStore } from '@sessionkit/core';
import {
  errorsFor,
  normalizeListOptions,
  registerStoreAdapter,
  SEARCH_TEXT_SEPARATOR,
  searchTextOf,
} from '@sessionkit/core/adapter';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore, PostgresStore, storeAdapter } from '../src/index.js';
import { LATEST_VERSION, MIGRATIONS } from '../src/schema.js';
import { SEARCH_CHUNK, searchChunks } from '../src/search-rows.js';
import { buildListQuery } from '../src/sql.js';
import { POSTGRES_URL, postgresAvailable } from './env.js';
import {
  admin,
  destroyStore,
  dropSchema,
  endAdmin,
  freshSchema,
  freshStore,
  newPool,
} from './harness.js';

const available = postgresAvailable('the PostgreSQL adapter tests did not run');

afterAll(async () => {
  if (available) await endAdmin();
});

/** A URL to the test server with a password in it (trust auth ignores it). */
function urlWithPassword(password: string, schema?: string): string {
  const u = new URL(POSTGRES_URL);
  u.password = password;
  if (schema) u.searchParams.set('schema', schema);
  return u.href;
}

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(plan: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const visit = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return;
    const n = node as Record<string, unknown>;
    out.push(n);
    for (const child of (n.Plans as unknown[] | undefined) ?? []) visit(child);
  };
  visit(plan);
  return out;
}

describe.runIf(available)('postgres › schema and migrations', () => {
  it('8 stores with their own pools opening an empty schema at once all succeed, migrating once', async () => {
    const schema = freshSchema();
    const pools = Array.from({ length: 8 }, () => newPool(2));
    try {
      const stores = await Promise.all(
        pools.map((pool) => PostgresStore.fromPool(pool, { schema })),
      );
      const r = await admin().query(
        `SELECT version, count(*)::int AS n FROM "${schema}".schema_migrations GROUP BY version ORDER BY version`,
      );
      expect(r.rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, n: 1 })));
      expect(Math.max(...r.rows.map((x: { version: number }) => x.version))).toBe(LATEST_VERSION);
      // Every store works on the shared schema.
      await stores[0]!.create({ id: 'shared-1', title: 'one' });
      for (const s of stores) expect((await s.load('shared-1')).title).toBe('one');
      for (const s of stores) await s.close();
    } finally {
      for (const p of pools) await p.end();
      await dropSchema(schema);
    }
  });

  it('rejects bad schema names before any I/O and quotes good ones', async () => {
    const pool = newPool(1);
    try {
      const pg = await import('pg');
      const client = new pg.default.Client({ connectionString: POSTGRES_URL });
      expect(() => new PostgresStore({ pool: client as never })).toThrow(/not a Client/);
      expect(() => new PostgresStore({ pool, extra: 1 } as never)).toThrow(/unknown option/);
      for (const bad of [
        '',
        'a-b',
        'x;drop',
        '1abc',
        'pg_catalog',
        'a"b',
        'a'.repeat(64),
        'sch ema',
      ]) {
        expect(() => new PostgresStore({ pool, schema: bad })).toThrow(/schema must be/);
      }
      // Mixed case is kept as written (quoted identifiers).
      const schema = `Sk_Mixed_${freshSchema()}`.slice(0, 63);
      const store = await PostgresStore.fromPool(pool, { schema });
      await store.create({ id: 'x' });
      const r = await admin().query(
        'SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1',
        [schema],
      );
      expect(r.rows[0].n).toBe(1);
      await store.close();
      await dropSchema(schema);
    } finally {
      await pool.end();
    }
  });
});

describe.runIf(available)('postgres › SQL never sees input as code', () => {
  it('strings that look like SQL round-trip literally in every text field and search literally', async () => {
    const store = await freshStore();
    try {
      const nasty = [
        "'; DROP TABLE sessions; --",
        '$1',
        '$$ dollar $$',
        '%',
        '_',
        'back\\slash \\% \\_',
        '"double" \'single\'',
        'ünïcödé ÄÖÜ 🚀 — 中文',
        ') OR 1=1 --',
        "\\x00 E'\\\\'",
      ];
      for (const [i, text] of nasty.entries()) {
        const id = `sql-${i}`;
        await store.create({
          id,
          title: text,
          folder: text,
          model: text,
          provider: text,
          status: text,
          mode: text,
          metadata: { [text]: text, plain: text },
          messages: [{ role: 'user', content: text }],
          state: { text },
        });
        const loaded = await store.load(id);
        expect(loaded).toMatchObject({
          title: text,
          folder: text,
          model: text,
          provider: text,
          status: text,
          mode: text,
          metadata: { [text]: text, plain: text },
          messages: [{ role: 'user', content: text }],
          state: { text },
        });
        // Commit patches take the same path as parameters, never as SQL.
        await store.commit(id, { patch: { title: `${text}!`, metadata: { [text]: null } } });
        const patched = await store.load(id);
        expect(patched.title).toBe(`${text}!`);
        expect(patched.metadata).toEqual({ plain: text });
        // Filters match exactly, search matches literally.
        expect((await store.list({ folder: text, status: text })).map((s) => s.id)).toEqual([id]);
        expect((await store.list({ folder: text, query: text })).map((s) => s.id)).toEqual([id]);
        // Router keys and event types.
        await store.bind(text, text, text, id);
        expect(await store.resolve(text, text, text, '')).toBe(id);
        await store.follow(text, `${text}-chat`, id);
        expect(await store.resolve(text, `${text}-chat`, 'any', '')).toBe(id);
        const ev = await store.append(id, text, { text });
        expect((await store.events(id)).map((e) => e.type)).toEqual([ev.type]);
        expect(ev.type).toBe(text);
      }
      // "%" and "_" are literal: only the sessions whose text contains them match.
      const pct = await store.list({ query: '%', limit: 100, includeArchived: true });
      expect(pct.map((s) => s.id).sort()).toEqual(['sql-3', 'sql-5']);
      const under = await store.list({ query: '_', limit: 100 });
      expect(under.map((s) => s.id).sort()).toEqual(['sql-4', 'sql-5']);
      const back = await store.list({ query: '\\', limit: 100 });
      expect(back.map((s) => s.id).sort()).toEqual(['sql-5', 'sql-9']);
      // Case folding is JavaScript's, not the C collation's ASCII-only lower().
      expect((await store.list({ query: 'äöü' })).map((s) => s.id)).toEqual(['sql-7']);
      const tables = await admin().query(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename = 'sessions'`,
        [store.schema],
      );
      expect(tables.rows[0].n).toBe(1);
      expect((await store.recent(100)).length).toBe(nasty.length);
    } finally {
      await destroyStore(store);
    }
  });
});

describe.runIf(available)('postgres › listing and search never touch message rows', () => {
  it('EXPLAIN of the listing and search statements shows no node on the messages table', async () => {
    const store = await freshStore();
    try {
      // Enough rows that the planner has real choices to make.
      for (let i = 0; i < 30; i++) {
        await store.create({
          id: `e-${i}`,
          folder: i % 2 ? 'odd' : 'even',
          title: `title ${i}`,
          messages: [
            { role: 'user', content: `question ${i} about zebras` },
            { role: 'assistant', content: `answer ${i}` },
          ],
        });
      }
      await admin().query(`ANALYZE "${store.schema}".sessions`);
      await admin().query(`ANALYZE "${store.schema}".search_rows`);
      await admin().query(`ANALYZE "${store.schema}".messages`);
      const errors = errorsFor('postgres');
      const cases = [
        {},
        { folder: 'odd' },
        { status: 'active', oldestFirst: true },
        { parentId: 'e-1' },
        { includeArchived: true, after: new Date(0) },
        { startAfter: { updatedAt: new Date(), id: 'e-5' }, limit: 20 },
        { query: 'zebras' },
        { query: '%_\\', folder: 'even', oldestFirst: true },
        { query: 'title 1' },
      ];
      const s = `"${store.schema}"`;
      for (const c of cases) {
        const stmt = buildListQuery(s, normalizeListOptions(errors, c));
        expect(stmt.text).not.toMatch(/\bmessages\b/);
        const r = await admin().query(`EXPLAIN (FORMAT JSON) ${stmt.text}`, stmt.values);
        const plan = (r.rows[0]['QUERY PLAN'] as { Plan: unknown }[])[0]!.Plan;
        const relations = planNodes(plan)
          .map((n) => n['Relation Name'])
          .filter((x) => x !== undefined);
        expect(relations, JSON.stringify(c)).not.toContain('messages');
        expect(relations).toContain('sessions');
        if ('query' in c) expect(relations).toContain('search_rows');
        // The statement the builder made is the one the store runs: same results.
        const direct = await admin().query(stmt.text, stmt.values);
        expect((await store.list(c)).map((x) => x.id)).toEqual(direct.rows.map((x) => x.id));
      }
      // The listing statement for 20 of the newest uses an index, not a sort of everything.
      const stmt = buildListQuery(
        s,
        normalizeListOptions(errors, { limit: 20, includeArchived: true }),
      );
      await admin().query('SET enable_seqscan = off');
      try {
        const r = await admin().query(`EXPLAIN (FORMAT JSON) ${stmt.text}`, stmt.values);
        const nodes = planNodes((r.rows[0]['QUERY PLAN'] as { Plan: unknown }[])[0]!.Plan);
        expect(nodes.some((n) => String(n['Node Type']).includes('Index'))).toBe(true);
      } finally {
        await admin().query('RESET enable_seqscan');
      }
    } finally {
      await destroyStore(store);
    }
  });

  it('the trigram index exists when pg_trgm is available', async () => {
    const store = await freshStore();
    try {
      const r = await admin().query(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'search_rows_trgm'`,
        [store.schema],
      );
      expect(r.rows[0]?.indexdef).toMatch(/gin \(text .*gin_trgm_ops\)/);
    } finally {
      await destroyStore(store);
    }
  });

  it('a commit inserts only its new rows and never rewrites stored ones', async () => {
    const store = await freshStore();
    try {
      await store.create({ id: 'grow', messages: [{ role: 'user', content: 'first' }] });
      const xmin = async () =>
        (
          await admin().query(
            `SELECT seq, xmin::text AS x FROM "${store.schema}".messages WHERE session_id = 'grow' ORDER BY seq`,
          )
        ).rows as { seq: number; x: string }[];
      const before = await xmin();
      await store.commit('grow', { append: [{ role: 'assistant', content: 'second' }] });
      const after = await xmin();
      expect(after).toHaveLength(2);
      expect(after[0]).toEqual(before[0]);
      await store.commit('grow', { replace: [{ role: 'user', content: 'only' }] });
      expect(await store.loadMessages('grow')).toEqual([{ role: 'user', content: 'only' }]);
    } finally {
      await destroyStore(store);
    }
  });
});

describe.runIf(available)('postgres › pools, URLs and errors', () => {
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

describe('postgres › search chunks', () => {
  it('holds each message as searchTextOf writes it (separator first), in rows of about 64 KB cut between messages', () => {
    expect(searchChunks([])).toEqual({ seqs: [], texts: [] });
    const messages = [
      { role: 'tool', content: [{ type: 'image', mediaType: 'x' }] },
      { role: 'user', content: 'Hello\u0000World' },
      'Bare',
      { role: 'assistant', content: [{ type: 'text', text: 'ÄÖÜ' }] },
    ];
    expect(searchChunks(messages)).toEqual({
      seqs: [1],
      texts: [searchTextOf(messages).replace('\u0000', '\uFFFD')],
    });
    expect(searchChunks(messages).texts[0]).toBe('Ahello\uFFFDworldAbareAäöü');
    const big = 'x'.repeat(40_000);
    const chunks = searchChunks([big, big, big, '', big]);
    expect(chunks.seqs).toEqual([0, 1, 2, 4]);
    // Rows concatenate to searchTextOf, and each starts at a message: no overlap needed.
    expect(chunks.texts.join('')).toBe(searchTextOf([big, big, big, big]));
    for (const text of chunks.texts) expect(text.startsWith(SEARCH_TEXT_SEPARATOR)).toBe(true);
    // One message over the row size is never split.
    const huge = 'y'.repeat(SEARCH_CHUNK + 10);
    expect(searchChunks([huge, 'z']).texts).toEqual([`A${huge}`, 'Az']);
  });
});

describe.runIf(available)('postgres › derived data stays exact', () => {
  it('a branch inside a committed turn does not find the text after its branch point', async () => {
    const store = await freshStore();
    try {
      const s = await store.create({ id: 'src', folder: 'f' });
      await store.commit(s.id, {
        append: [
          { role: 'user', content: 'alpha question' },
          { role: 'assistant', content: 'omega answer' },
        ],
      });
      const b = await store.branch(s.id, 1);
      const hits = async (q: string) =>
        (await store.list({ folder: 'f', query: q })).map((x) => x.id).sort();
      expect(await hits('omega')).toEqual(['src']);
      expect(await hits('alpha')).toEqual([b.id, 'src'].sort());
      // One turn is one search row, yet a query across its two messages matches nothing.
      expect(await hits('question\nomega')).toEqual([]);
      expect(await hits('questionomega')).toEqual([]);
      const c = await store.clone(s.id);
      expect(await hits('omega')).toEqual([c.id, 'src'].sort());
      // A healthy store needs no repair.
      expect((await store.repair()).indexEntriesFixed).toBe(0);
    } finally {
      await destroyStore(store);
    }
  });

  it('delete and enforceMax leave no message or search rows behind; repair drops orphans', async () => {
    const store = await freshStore();
    const count = async (table: string) =>
      (await admin().query(`SELECT count(*)::int AS n FROM "${store.schema}".${table}`)).rows[0].n;
    try {
      for (let i = 0; i < 4; i++) {
        await store.create({
          id: `d-${i}`,
          title: `t${i}`,
          updatedAt: new Date(Date.UTC(2024, 0, 1 + i)),
          messages: [{ role: 'user', content: `m${i}` }],
        });
      }
      await store.delete('d-0');
      expect(await count('messages')).toBe(3);
      expect(await count('search_rows')).toBe(6);
      expect(await store.enforceMax(1)).toBe(2);
      expect(await count('messages')).toBe(1);
      expect(await count('search_rows')).toBe(2);
      await admin().query(
        `INSERT INTO "${store.schema}".search_rows (session_id, seq, text) VALUES ('ghost', 0, 'boo')`,
      );
      const report = await store.repair();
      expect(report).toEqual({ rebuilt: 1, skippedCorrupt: [], indexEntriesFixed: 1 });
      expect(await count('search_rows')).toBe(2);
    } finally {
      await destroyStore(store);
    }
  });
});

describe.runIf(available)('postgres › reads during an open turn', () => {
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

describe.runIf(available)('postgres › trees under concurrency', () => {
  it('a branch racing the delete of its parent is never left pointing at a deleted session', async () => {
    const store = await freshStore();
    const pool = newPool(8);
    const peer = new PostgresStore({ pool, schema: store.schema });
    try {
      for (let round = 0; round < 15; round++) {
        const g = await store.create({ id: `g-${round}` });
        const p = await store.create({
          id: `p-${round}`,
          parentId: g.id,
          messages: [{ role: 'user', content: 'x' }],
        });
        const results = await Promise.allSettled([
          peer.branch(p.id, 1),
          store.delete(p.id),
          peer.branch(p.id, 0),
        ]);
        expect(results[1]!.status).toBe('fulfilled');
        for (const r of [results[0]!, results[2]!]) {
          if (r.status === 'rejected') {
            expect(isSessionKitError(r.reason, 'not_found')).toBe(true);
            continue;
          }
          // Created before the delete: promoted to the grandparent with its siblings.
          const child = await store.load(r.value.id);
          expect(child.parentId).toBe(g.id);
        }
        const dangling = await admin().query(
          `SELECT c.id FROM "${store.schema}".sessions AS c
           WHERE c.parent_id IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM "${store.schema}".sessions AS p WHERE p.id = c.parent_id)`,
        );
        expect(dangling.rows).toEqual([]);
      }
    } finally {
      await peer.close();
      await pool.end();
      await destroyStore(store);
    }
  });
});
