// Repair: the derived data of every session (`message_count`, `title_search` and the
// search rows: chunks, block words, pending rows) checked against its authoritative rows
// and rebuilt where it differs, one session at a time under its row lock; search rows no
// session owns swept. Message rows are never deleted here.
import type { RepairReport } from '@sessionkit/core';
import { SEARCH_TEXT_SEPARATOR } from '@sessionkit/core/adapter';
import type { PoolClient } from 'pg';
import type { StoreContext } from './context.js';
import { blockOf } from './search-index-plan.js';
import { readBlockWords } from './search-index-writes.js';
import { rebuildSessionSearch } from './search-rebuild.js';
import { type SearchChunks, searchChunksIn, titleSearchText } from './search-rows.js';
import { wordsOf, wordsOfRow } from './search-words.js';
import type {
  RepairHeadRow,
  StoredMessageRow,
  StoredSearchText,
} from './statements/maintenance.js';
import { queryOn } from './transaction.js';

/** What repairing one session found: vanished, fine, fixed, or corrupt (left as it is). */
type Outcome = 'gone' | 'ok' | 'fixed' | { reason: string };

/**
 * Repairs every session, in pages of 200 ids; `assertOpen` is called before each page (a
 * closed store stops). Returns core's report.
 */
export async function rebuildIndex(
  ctx: StoreContext,
  assertOpen: () => void,
): Promise<RepairReport> {
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
  // Search rows of sessions that no longer exist or of their past epochs, which a write
  // racing the indexer can leave: garbage, not damage (search never counts them), so they
  // are deleted without being reported. Message rows, authoritative, are never deleted here.
  await ctx.db.query(ctx.statements.search.sweepOrphans, [], { doing: 'repair' });
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
 * Whether the stored search texts of the current epoch hold exactly the text of `chunks`
 * (row boundaries depend on how the history was committed and indexed; the text does
 * not), each starting at a message (with the separator) within the history.
 */
function searchTextsMatch(
  stored: readonly StoredSearchText[],
  chunks: SearchChunks,
  messageCount: number,
): boolean {
  return (
    stored.every((r) => r.seq < messageCount && r.text.startsWith(SEARCH_TEXT_SEPARATOR)) &&
    stored.map((r) => r.text).join('') === chunks.texts.join('')
  );
}

/**
 * Whether the words rows hold every word of the indexed chunks, each in the block of its
 * chunk, and every word of the title unless its row is still pending: without them search
 * would never look at that text.
 */
async function wordsCover(
  ctx: StoreContext,
  c: PoolClient,
  id: string,
  h: RepairHeadRow,
  stored: readonly StoredSearchText[],
): Promise<boolean> {
  const q = ctx.statements.maintenance;
  const chunks = stored.filter((r) => !r.pending);
  const blocks = [...new Set(chunks.map((r) => blockOf(r.seq)))].map((block) => ({
    sessionId: id,
    epoch: h.search_epoch,
    block,
  }));
  const held = [...(await readBlockWords(c, ctx.statements.s, blocks)).values()];
  const byBlock = new Map(blocks.map((b, i) => [b.block, held[i]!]));
  for (const r of chunks) {
    const words = byBlock.get(blockOf(r.seq))!;
    if (!wordsOf(r.text).every((w) => words.has(w))) return false;
  }
  if ((await queryOn(c, q.titlePending, [id])).rows[0]?.p) return true;
  const titleWords = new Set(
    (await queryOn(c, q.titleWords, [id])).rows.flatMap((r) => wordsOfRow(r.words)),
  );
  return wordsOf(h.title_search).every((w) => titleWords.has(w));
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
    const stored = (await queryOn(c, q.storedSearchTexts, [id, h.search_epoch])).rows;
    // What the schema's search scope stores (search-scope.ts).
    const chunks = searchChunksIn(ctx.search.scope, messages);
    const title = titleSearchText(ctx.search.scope, h.title);
    const searchOk =
      h.title_search === title &&
      searchTextsMatch(stored, chunks, messages.length) &&
      (await wordsCover(ctx, c, id, h, stored));
    const countOk = h.message_count === messages.length;
    if (searchOk && countOk) return 'ok';
    if (!searchOk) await rebuildSessionSearch(c, ctx.statements.s, id, chunks, title);
    if (!countOk) await queryOn(c, q.setMessageCount, [id, messages.length]);
    return 'fixed';
  });
}
