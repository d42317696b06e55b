// search-rows.ts: the search text a write stores holds each message separately, in rows of
// about 64 KB; the indexer joins rows into chunks of the same size (search-index-plan.ts).
import { SEARCH_TEXT_SEPARATOR, searchTextMatches, searchTextOf } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { SEARCH_CHUNK, searchChunks, searchChunksIn } from '../src/search-rows.js';
import { admin, borrowedStore, postgresForFile } from './harness.js';

const available = postgresForFile('the search-rows tests did not run');

describe.runIf(available)('search-rows › search never spans two messages', () => {
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
      const seqs = async (sql: string) =>
        (await admin().query(sql)).rows.map((r: { seq: number }) => r.seq);
      // Rows 0, 2 and 3 were written, pending or already moved by the store's own indexer
      // (it runs about 0.5 s after a write: a slow machine may get there first).
      const pending = await seqs(`SELECT seq FROM "${schema}".search_pending WHERE seq >= 0`);
      const moved = await seqs(`SELECT first_seq AS seq FROM "${schema}".search_chunks`);
      expect([...pending, ...moved].sort((a, b) => a - b)).toEqual([0, 2, 3]);
      await store.indexPendingSearch();
      // The 66 KB row and the one after it are each too long to join a chunk before them.
      expect(
        await seqs(`SELECT first_seq AS seq FROM "${schema}".search_chunks ORDER BY first_seq`),
      ).toEqual([0, 2, 3]);
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

describe('search-rows › search chunks', () => {
  it('holds each message as searchTextOf writes it (separator first), in rows of about 64 KB cut between messages', () => {
    expect(searchChunks([])).toEqual({ seqs: [], nexts: [], texts: [] });
    const messages = [
      { role: 'tool', content: [{ type: 'image', mediaType: 'x' }] },
      { role: 'user', content: 'Hello\u0000World' },
      'Bare',
      { role: 'assistant', content: [{ type: 'text', text: 'ÄÖÜ' }] },
    ];
    expect(searchChunks(messages)).toEqual({
      seqs: [1],
      nexts: [4],
      texts: [searchTextOf(messages).replace('\u0000', 'A')],
    });
    // What a write stores starts at its first message, so consecutive commits leave no gap.
    expect(searchChunksIn('messages', messages).seqs).toEqual([0]);
    expect(searchChunksIn('titles', messages)).toEqual({ seqs: [], nexts: [], texts: [] });
    // NUL, which PostgreSQL text cannot hold, as the separator: no query matches across it.
    expect(searchChunks(messages).texts[0]).toBe('AhelloAworldAbareAäöü');
    const big = 'x'.repeat(40_000);
    const chunks = searchChunks([big, big, big, '', big]);
    expect(chunks.seqs).toEqual([0, 1, 2, 4]);
    expect(chunks.nexts).toEqual([1, 2, 4, 5]);
    // Rows concatenate to searchTextOf, and each starts at a message: no overlap needed.
    expect(chunks.texts.join('')).toBe(searchTextOf([big, big, big, big]));
    for (const text of chunks.texts) expect(text.startsWith(SEARCH_TEXT_SEPARATOR)).toBe(true);
    // One message over the row size is never split.
    const huge = 'y'.repeat(SEARCH_CHUNK + 10);
    expect(searchChunks([huge, 'z']).texts).toEqual([`A${huge}`, 'Az']);
  });
});
