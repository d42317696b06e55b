// Schema version 11 applied to schemas created and written by version 10 (the previous
// release): a `titles` schema's search_chunks loses its storage (its titles still found,
// its turns still written), a `messages` schema keeps its chunks as they are, and a
// `titles` schema opened later with message search finds every message committed before.
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, PostgresStore } from '../src/index.js';
import { planIndex } from '../src/search-index-plan.js';
import { writeIndexPlan } from '../src/search-index-writes.js';
import { searchChunks } from '../src/search-rows.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { oldSessionWithWordsIndex, schemaAtVersion } from './old-schema.js';

const available = postgresForFile('the PostgreSQL migration 11 test did not run');

const one = async (sql: string, values: unknown[] = []) =>
  (await admin().query(sql, values)).rows[0];

const message = (n: number, marker = '') => ({
  role: n % 2 === 0 ? 'user' : 'assistant',
  content: `message ${n} about the harbour ${marker}`.trim(),
});

/**
 * Creates a version 10 schema under search scope `scope` holding session "old" (title
 * "Old Chat", 20 messages, "walrus" in message 7): as version 10 left it, the title's
 * words indexed, and under `messages` the messages' chunks and words too.
 */
async function version10Store(s: string, scope: 'messages' | 'titles'): Promise<void> {
  const c = await admin().connect();
  try {
    await schemaAtVersion(c, s, 10);
    await c.query(`UPDATE ${s}.settings SET value = $1 WHERE name = 'search'`, [scope]);
    const messages = Array.from({ length: 20 }, (_, i) => message(i, i === 7 ? 'walrus' : ''));
    const epoch = await oldSessionWithWordsIndex(c, s, 'Old Chat', messages);
    const title = { sessionId: 'old', epoch, seq: -1, nextSeq: -1, text: 'old chat' };
    const texts =
      scope === 'messages' ? searchChunks(messages) : { seqs: [], nexts: [], texts: [] };
    const rows = texts.texts.map((t, i) => ({
      sessionId: 'old',
      epoch,
      seq: texts.seqs[i]!,
      nextSeq: texts.nexts[i]!,
      text: t,
    }));
    await writeIndexPlan(
      c,
      s,
      planIndex([title, ...rows], () => undefined),
    );
  } finally {
    c.release();
  }
}

/** `relkind` of the schema's search_chunks and the bytes of its files. */
async function chunksTable(schema: string): Promise<{ kind: string; bytes: number }> {
  const r = await one(
    `SELECT c.relkind AS kind, pg_total_relation_size(c.oid) AS bytes FROM pg_class AS c
     JOIN pg_namespace AS n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relname = 'search_chunks'`,
    [schema],
  );
  return { kind: r.kind, bytes: Number(r.bytes) };
}

const ids = async (store: PostgresStore, query: string) =>
  (await store.list({ query })).map((x) => x.id).sort();

describe.runIf(available)('postgres › migration 11', () => {
  it('upgrades a version 10 "titles" store: no chunk storage, titles found, and message search later finds all', async () => {
    const schema = freshSchema();
    await version10Store(`"${schema}"`, 'titles');
    expect(await chunksTable(schema)).toMatchObject({ kind: 'r' });
    const pool = newPool();
    try {
      const titles = await PostgresStore.fromPool(pool, { schema });
      expect((await one(`SELECT max(version) AS n FROM "${schema}".schema_migrations`)).n).toBe(
        LATEST_VERSION,
      );
      expect(titles.searchScope).toBe('titles');
      // A partitioned table without partitions: no file, not even an index page.
      expect(await chunksTable(schema)).toEqual({ kind: 'p', bytes: 0 });
      expect(await ids(titles, 'old chat')).toEqual(['old']);
      expect(await ids(titles, 'walrus')).toEqual([]);
      // Every write that touches chunks runs on the table without storage.
      await titles.commit('old', {
        append: [message(20, 'narwhal')],
        patch: { title: 'Harbour log' },
      });
      const copy = await titles.clone('old');
      const branch = await titles.branch('old', 21);
      await titles.commit(branch.id, { append: [message(30, 'kelp')] });
      await titles.merge(branch.id);
      await titles.commit(copy.id, { replace: [message(40, 'otter')] });
      await titles.commit(copy.id, { truncate: 0, append: [message(41)] });
      await titles.indexPendingSearch();
      expect(await ids(titles, 'harbour log')).toEqual([branch.id, copy.id, 'old'].sort());
      expect(await ids(titles, 'narwhal')).toEqual([]);
      expect((await titles.repair()).indexEntriesFixed).toBe(0);
      await titles.delete(copy.id);
      expect(await titles.enforceMax(1)).toBe(0);
      await titles.close();

      // Message search on the same schema: every message committed before is found.
      const progress: string[] = [];
      const messages = await PostgresStore.fromPool(pool, {
        schema,
        search: 'messages',
        onMigrationProgress: (p) => progress.push(p.task),
      });
      expect(progress[0]).toBe('search scope titles → messages');
      expect((await chunksTable(schema)).kind).toBe('r');
      // The merge fast-forwarded "old" to the branch: its 21 messages and "kelp".
      for (const word of ['walrus', 'narwhal', 'kelp']) {
        expect(await ids(messages, word)).toEqual([branch.id, 'old'].sort());
      }
      expect(await ids(messages, 'harbour log')).toEqual([branch.id, 'old'].sort());
      await messages.commit('old', { append: [message(50, 'seahorse')] });
      await messages.indexPendingSearch();
      expect(await ids(messages, 'seahorse')).toEqual(['old']);
      expect(
        Number((await one(`SELECT count(*) AS n FROM "${schema}".search_chunks`)).n),
      ).toBeGreaterThan(0);
      expect((await messages.repair()).indexEntriesFixed).toBe(0);
      await messages.close();

      // And back: the chunks' storage goes, titles stay searchable.
      const again = await PostgresStore.fromPool(pool, { schema, search: 'titles' });
      expect(await chunksTable(schema)).toEqual({ kind: 'p', bytes: 0 });
      expect(await ids(again, 'harbour log')).toEqual([branch.id, 'old'].sort());
      expect(await ids(again, 'seahorse')).toEqual([]);
      await again.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });

  it('upgrades a version 10 "messages" store: its chunks stay and are found', async () => {
    const schema = freshSchema();
    await version10Store(`"${schema}"`, 'messages');
    const before = await one(`SELECT count(*) AS n FROM "${schema}".search_chunks`);
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      expect(store.searchScope).toBe('messages');
      expect(
        (await one(`SELECT name FROM "${schema}".schema_migrations WHERE version = 11`))?.name,
      ).toBe('chunks_by_scope');
      expect((await chunksTable(schema)).kind).toBe('r');
      expect(await one(`SELECT count(*) AS n FROM "${schema}".search_chunks`)).toEqual(before);
      expect(await ids(store, 'walrus')).toEqual(['old']);
      expect(await ids(store, 'old chat')).toEqual(['old']);
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });

  it('a new "titles" or "none" schema has no chunk storage; a "titles" indexer drops message rows left pending', async () => {
    for (const search of ['titles', 'none'] as const) {
      const schema = freshSchema();
      const pool = newPool();
      try {
        const store = await PostgresStore.fromPool(pool, { schema, search });
        expect(await chunksTable(schema)).toEqual({ kind: 'p', bytes: 0 });
        await store.create({ id: 'a', title: 'Tide tables', messages: [message(0)] });
        // A row a store of the old scope left pending: it has nowhere to go.
        await admin().query(
          `INSERT INTO "${schema}".search_pending (session_id, seq, next_seq, epoch, text)
           SELECT id, 1, 2, search_epoch, 'Aleft behind' FROM "${schema}".sessions WHERE id = 'a'`,
        );
        await store.indexPendingSearch();
        expect(store.stats.searchIndexFailures).toBe(0);
        expect(Number((await one(`SELECT count(*) AS n FROM "${schema}".search_pending`)).n)).toBe(
          0,
        );
        if (search === 'titles') expect(await ids(store, 'tide')).toEqual(['a']);
        await store.close();
      } finally {
        await pool.end();
        await dropSchema(schema);
      }
    }
  });

  it('a "messages" store follows a scope change another store made: its pass drops its text, its turns write none', async () => {
    const schema = freshSchema();
    const pool = newPool();
    const other = newPool();
    try {
      const stale = await PostgresStore.fromPool(pool, { schema });
      await stale.create({ id: 'a', title: 'Tide tables', messages: [message(0, 'walrus')] });
      await stale.indexPendingSearch();
      const titles = await PostgresStore.fromPool(other, { schema, search: 'titles' });
      expect(await chunksTable(schema)).toEqual({ kind: 'p', bytes: 0 });
      await titles.close();
      // Still "messages" in its memory: this turn leaves message text pending.
      await stale.commit('a', { append: [message(1, 'narwhal')] });
      await stale.indexPendingSearch();
      expect(stale.searchScope).toBe('titles');
      expect(stale.stats.searchIndexFailures).toBe(0);
      await stale.commit('a', { append: [message(2, 'kelp')] });
      const pending = `SELECT count(*) AS n FROM "${schema}".search_pending`;
      expect(Number((await one(pending)).n)).toBe(0);
      expect(await ids(stale, 'tide')).toEqual(['a']);
      expect(await ids(stale, 'narwhal')).toEqual([]);
      await stale.close();
    } finally {
      await pool.end();
      await other.end();
      await dropSchema(schema);
    }
  });
});
