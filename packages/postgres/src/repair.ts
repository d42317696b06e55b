// Repair: the derived data of every session (`message_count`, `search_rows` and the
// pending rows of `search_pending`) rebuilt from its authoritative rows, one session at a
// time under its row lock; orphaned search rows dropped. Message rows are never deleted here.
import type { RepairReport } from '@sessionkit/core';
import { SEARCH_TEXT_SEPARATOR } from '@sessionkit/core/adapter';
import type { PoolClient } from 'pg';
import type { StoreContext } from './context.js';
import { type SearchChunks, searchChunksIn, titleSearchText } from './search-rows.js';
import type { SearchRow, StoredMessageRow } from './statements/maintenance.js';
import { queryOn } from './transaction.js';

/** What repairing one session found: vanished, fine, fixed, or corrupt (left as it is). */
type Outcome = 'gone' | 'ok' | 'fixed' | { reason: string };

/**
 * Repairs every session, in pages of 200 ids; `assertOpen` is called before each page (a
 * closed store stops). Returns core's report.
 */
export async function repairAll(ctx: StoreContext, assertOpen: () => void): Promise<RepairReport> {
  const q = ctx.statements.maintenance;
  const report: RepairReport = { rebuilt: 0, skippedCorrupt: [], indexEntriesFixed: 0 };
  let after = '';
  for (;;) {
    assertOpen();
    const page = await ctx.db.query(q.sessionPage, [after], { doing: 'repair' });
    for (const { id } of page.rows) {
      const outcome = await repairOne(ctx, id);
      if (outcome === 'gone') continue;
      if (typeof outcome === 'object') report.skippedCorrupt.push({ id, reason: outcome.reason });
      else {
        report.rebuilt++;
        if (outcome === 'fixed') report.indexEntriesFixed++;
      }
    }
    if (page.rows.length < 200) break;
    after = page.rows[page.rows.length - 1]!.id;
  }
  // Search rows of sessions that no longer exist (derived data only: message rows,
  // which are authoritative, are never deleted here).
  const orphans = await ctx.db.query(q.deleteOrphanSearchRows, [], { doing: 'repair' });
  report.indexEntriesFixed += orphans.rows[0]?.n ?? 0;
  return report;
}

/** The messages of the rows, or the reason they are corrupt (a gap, a body that does not parse). */
function messagesOf(rows: readonly StoredMessageRow[]): unknown[] | { reason: string } {
  const messages: unknown[] = [];
  for (let i = 0; i < rows.length; i++) {
    const m = rows[i]!;
    if (m.seq !== i) return { reason: `message rows have a gap at ${i} (found seq ${m.seq})` };
    try {
      messages.push(JSON.parse(m.body));
    } catch {
      return { reason: `message ${i} is not valid JSON` };
    }
  }
  return messages;
}

/**
 * Whether the stored search rows hold exactly the text of `chunks` and the title. Row
 * boundaries depend on how the history was committed; the text does not. Each row starts
 * at a message (with the separator), so no match spans two rows.
 */
function searchRowsMatch(
  stored: readonly SearchRow[],
  chunks: SearchChunks,
  title: string,
  messageCount: number,
): boolean {
  const storedTitle = stored.find((r) => r.seq === -1)?.text ?? '';
  const storedRows = stored.filter((r) => r.seq >= 0);
  return (
    storedTitle === title &&
    storedRows.every((r) => r.seq < messageCount && r.text.startsWith(SEARCH_TEXT_SEPARATOR)) &&
    storedRows.map((r) => r.text).join('') === chunks.texts.join('')
  );
}

/** Repairs one session's derived data in one transaction. */
function repairOne(ctx: StoreContext, id: string): Promise<Outcome> {
  const q = ctx.statements.maintenance;
  return ctx.db.tx('repair', async (c): Promise<Outcome> => {
    const h = (await queryOn(c, q.lockRepairHead, [id])).rows[0];
    if (!h) return 'gone';
    ctx.stats.messageBodyReads++;
    const messages = messagesOf((await queryOn(c, q.messageRows, [id])).rows);
    if (!Array.isArray(messages)) return messages;
    if (h.state !== null) {
      try {
        JSON.parse(h.state);
      } catch {
        return { reason: 'state is not valid JSON' };
      }
    }
    const stored = await queryOn(c, q.searchRows, [id]);
    // What the schema's search scope stores (search-scope.ts).
    const chunks = searchChunksIn(ctx.search.scope, messages);
    const title = titleSearchText(ctx.search.scope, h.title);
    const searchOk = searchRowsMatch(stored.rows, chunks, title, messages.length);
    const countOk = h.message_count === messages.length;
    if (searchOk && countOk) return 'ok';
    if (!searchOk) await rewriteSearchRows(ctx, c, id, chunks, title);
    if (!countOk) await queryOn(c, q.setMessageCount, [id, messages.length]);
    return 'fixed';
  });
}

/** Replaces all search rows of `id` by `chunks` and the title row. */
async function rewriteSearchRows(
  ctx: StoreContext,
  c: PoolClient,
  id: string,
  chunks: SearchChunks,
  title: string,
): Promise<void> {
  if (title !== '') {
    chunks.seqs.push(-1);
    chunks.texts.push(title);
  }
  await queryOn(c, ctx.statements.maintenance.deleteSearchRows, [id]);
  await queryOn(c, ctx.statements.sessions.insertSearchRows, [id, chunks.seqs, chunks.texts]);
}
