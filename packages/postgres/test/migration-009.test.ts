// Schema version 9 applied to a schema created and written by version 8 (the previous
// release): the search rows version 8 wrote stay where they are and are still found, and
// words rows written from then on stay in their pages (no TOAST).
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, PostgresStore } from '../src/index.js';
import { planIndex } from '../src/search-index-plan.js';
import { writeIndexPlan } from '../src/search-index-writes.js';
import { searchChunks } from '../src/search-rows.js';
import { admin, dropSchema, freshSchema, newPool, postgresForFile } from './harness.js';
import { oldSessionWithWordsIndex, schemaAtVersion } from './old-schema.js';

const available = postgresForFile('the PostgreSQL migration 9 test did not run');

/** About 1 KB of words, different for each `n`, with `marker` in the middle. */
const text = (n: number, marker = '') =>
  Array.from({ length: 160 }, (_, i) => (i === 80 ? marker : `w${(n * 131 + i * 7919) % 997}q`))
    .filter((w) => w !== '')
    .join(' ');
const message = (n: number, marker = '') => ({ role: 'user', content: text(n, marker) });

/** Creates a version 8 schema holding session "old": its title and 30 messages indexed, 2 pending. */
async function version8Store(s: string): Promise<void> {
  const c = await admin().connect();
  try {
    await schemaAtVersion(c, s, 8);
    const messages = Array.from({ length: 32 }, (_, i) => message(i, i === 3 ? 'zanzibar' : ''));
    messages[31] = message(31, 'quokka');
    const epoch = await oldSessionWithWordsIndex(c, s, 'Old chat', messages);
    // What version 8's indexer wrote for messages 0 … 29, and a turn's pending row for 30, 31.
    const indexed = searchChunks(messages.slice(0, 30));
    const rows = indexed.texts.map((t, i) => ({
      sessionId: 'old',
      epoch,
      seq: indexed.seqs[i]!,
      nextSeq: indexed.nexts[i]!,
      text: t,
    }));
    const title = { sessionId: 'old', epoch, seq: -1, nextSeq: -1, text: 'old chat' };
    await writeIndexPlan(
      c,
      s,
      planIndex([title, ...rows], () => undefined),
    );
    const pending = searchChunks(messages.slice(30));
    await c.query(
      `INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
       VALUES ('old', 30, 32, $1, $2)`,
      [epoch, pending.texts[0]],
    );
  } finally {
    c.release();
  }
}

const one = async (sql: string) => (await admin().query(sql)).rows[0];

describe.runIf(available)('postgres › migration 9', () => {
  it('upgrades a version 8 store: old search rows found, new words rows kept inline', async () => {
    const schema = freshSchema();
    const s = `"${schema}"`;
    await version8Store(s);
    const oldChunk = `SELECT pg_column_compression(text) AS c FROM ${s}.search_chunks WHERE first_seq = 0`;
    const before = (await one(oldChunk)).c;
    const pool = newPool();
    try {
      const store = await PostgresStore.fromPool(pool, { schema });
      expect((await one(`SELECT max(version) AS n FROM ${s}.schema_migrations`)).n).toBe(
        LATEST_VERSION,
      );
      const options = async (rel: string) =>
        (await one(`SELECT reloptions AS o FROM pg_class WHERE oid = '${s}.${rel}'::regclass`)).o;
      expect(await options('search_words')).toContain('toast_tuple_target=8160');
      // Nothing was rewritten: the old chunk keeps its compression and is still found.
      expect((await one(oldChunk)).c).toBe(before);
      const found = async (q: string) => (await store.list({ query: q })).map((x) => x.id);
      expect(await found('zanzibar')).toEqual(['old']);
      expect(await found('quokka')).toEqual(['old']);
      expect(await found('old chat')).toEqual(['old']);
      const turn = [message(40, 'wombat'), message(41)];
      const r = await store.commit('old', { expectedRevision: 1, append: turn });
      expect(r.messageCount).toBe(34);
      expect(await found('wombat')).toEqual(['old']);
      await store.indexPendingSearch();
      expect(Number((await one(`SELECT count(*) AS n FROM ${s}.search_pending`)).n)).toBe(0);
      expect(await found('wombat')).toEqual(['old']);
      expect(await found('quokka')).toEqual(['old']);
      expect(await found('zanzibar')).toEqual(['old']);
      expect(await found('walrus')).toEqual([]);
      // A words row over 2 KB: version 8 compressed it (the old session's first one); now
      // it is stored as it is, in its page.
      const oldWords = await one(
        `SELECT pg_column_compression(words) AS c FROM ${s}.search_words
         WHERE session_id = 'old' AND block = 0 ORDER BY octet_length(words) DESC LIMIT 1`,
      );
      expect(oldWords.c).not.toBeNull();
      const distinct = Array.from({ length: 700 }, (_, i) => `n${i}x${i * 7}`).join(' ');
      await store.create({ id: 'fresh' });
      await store.commit('fresh', { append: [{ role: 'user', content: distinct }] });
      await store.indexPendingSearch();
      const fresh = await one(
        `SELECT max(octet_length(words)) AS longest,
           count(pg_column_compression(words)) AS compressed
         FROM ${s}.search_words WHERE session_id = 'fresh' AND block = 0`,
      );
      expect(fresh.longest).toBeGreaterThan(2100);
      expect(Number(fresh.compressed)).toBe(0);
      expect(await found('n699x4893')).toEqual(['fresh']);
      expect((await store.repair()).skippedCorrupt).toEqual([]);
      expect(await found('wombat')).toEqual(['old']);
      await store.close();
    } finally {
      await pool.end();
      await dropSchema(schema);
    }
  });
});
