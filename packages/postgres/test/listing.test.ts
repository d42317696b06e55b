// listing.ts / statements/listing.ts: the listing query never reads message rows, and a
// search gives the same sessions whichever way it finds them.
import { errorsFor, normalizeListOptions } from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';
import { queryRuns } from '../src/search-words.js';
import { buildListQuery, type SearchPlan } from '../src/statements/listing.js';
import { admin, destroyStore, freshStore, postgresForFile } from './harness.js';

const available = postgresForFile('the listing tests did not run');

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

describe.runIf(available)('listing › listing and search never touch message rows', () => {
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
      await store.indexPendingSearch();
      await store.commit('e-3', { append: [{ role: 'user', content: 'pending zebras' }] });
      for (const table of [
        'sessions',
        'search_chunks',
        'search_words',
        'search_pending',
        'messages',
      ]) {
        await admin().query(`ANALYZE "${store.schema}".${table}`);
      }
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
        const opts = normalizeListOptions(errors, c);
        const best = opts.query === undefined ? undefined : queryRuns(opts.query)[0];
        const plans: SearchPlan[] = [{ kind: 'walk' }];
        if (best) plans.push({ kind: 'words', wordsPattern: best.pattern });
        for (const searchPlan of plans) {
          const stmt = buildListQuery(s, opts, searchPlan);
          expect(stmt.text).not.toMatch(/\bmessages\b/);
          const r = await admin().query(`EXPLAIN (FORMAT JSON) ${stmt.text}`, stmt.values);
          const plan = (r.rows[0]['QUERY PLAN'] as { Plan: unknown }[])[0]!.Plan;
          const relations = planNodes(plan)
            .map((n) => n['Relation Name'])
            .filter((x) => x !== undefined);
          expect(relations, JSON.stringify(c)).not.toContain('messages');
          expect(relations).toContain('sessions');
          if ('query' in c) {
            expect(relations).toContain('search_chunks');
            expect(relations).toContain('search_pending');
          }
          if (searchPlan.kind === 'words') expect(relations).toContain('search_words');
          // The statement the builder made gives what the store gives, whatever the plan.
          const direct = await admin().query(stmt.text, stmt.values);
          expect((await store.list(c)).map((x) => x.id)).toEqual(direct.rows.map((x) => x.id));
        }
      }
      // Both plans find the pending text and the indexed one.
      expect((await store.list({ query: 'pending zebras' })).map((x) => x.id)).toEqual(['e-3']);
      expect((await store.list({ query: 'zebras' })).length).toBe(30);
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
});
