// statements/*.ts: every value reaches PostgreSQL as a parameter, never as SQL text.
import { describe, expect, it } from 'vitest';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the statements tests did not run');

describe.runIf(available)('statements › SQL never sees input as code', () => {
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
