// The statement of `list`: filters, keyset cursor, search and paging. Rows: `HeaderRow`.
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import { BLOCK_MESSAGES } from '../search-index-plan.js';
import { headerColumns, type Statement } from '../sql.js';

/** `value` as a LIKE pattern matching it literally anywhere: `\`, `%` and `_` escaped. */
export function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * How a search finds its sessions. `walk`: in list order, checking each session's text
 * until the page is full (cheap when many match). `words`: only the sessions with a words
 * row matching `wordsPattern` (search-words.ts) or with pending rows, then the same check
 * in list order, reading only the chunks of the blocks whose words match (cheap when few
 * match).
 */
export type SearchPlan = { kind: 'walk' } | { kind: 'words'; wordsPattern: string };

/**
 * The statement `list` runs (rows: `HeaderRow` of rows.ts): filters, keyset cursor, search
 * and paging over `sessions` and the search tables only — it never references the
 * `messages` table. A search is exact whatever `plan` says: a session matches when its
 * title (`title_search`) or one stored text of its current search epoch (a chunk or a
 * pending row) contains the query; the filters and order come first (in an ordered
 * subquery that the check cannot be pushed into, so the page stops the checking).
 * Exported for the EXPLAIN test. `s` is the quoted schema.
 */
export function buildListQuery(
  s: string,
  opts: NormalizedListOptions,
  plan: SearchPlan = { kind: 'walk' },
): Statement {
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const where: string[] = [];
  if (opts.folder !== undefined) where.push(`s.folder = ${param(opts.folder)}`);
  if (opts.status !== undefined) where.push(`s.status = ${param(opts.status)}`);
  if (opts.parentId !== undefined) where.push(`s.parent_id = ${param(opts.parentId)}`);
  if (!opts.includeArchived) where.push('s.archived_at IS NULL');
  if (opts.after !== undefined) where.push(`s.updated_at > ${param(new Date(opts.after))}`);
  if (opts.startAfter !== undefined) {
    const cmp = opts.oldestFirst ? '>' : '<';
    where.push(
      `(s.updated_at, s.id) ${cmp} (${param(new Date(opts.startAfter.updatedAt))}::timestamptz, ${param(opts.startAfter.id)}::text COLLATE "C")`,
    );
  }
  const dir = opts.oldestFirst ? 'ASC' : 'DESC';
  const order = `ORDER BY s.updated_at ${dir}, s.id ${dir}`;
  const filtered = (extra: string[]) => {
    const all = [...where, ...extra];
    return `FROM ${s}.sessions AS s ${all.length > 0 ? `WHERE ${all.join(' AND ')}` : ''}`;
  };
  const paging = () => `LIMIT ${param(opts.limit)} OFFSET ${param(opts.offset)}`;
  if (opts.query === undefined) {
    return {
      text: `SELECT ${headerColumns('s', s)}\n${filtered([])}\n${order}\n${paging()}`,
      values,
    };
  }
  // The query is lower-cased by core (JS toLowerCase), like the stored search text, in
  // which each message's text follows core's separator ("A", which no lower-cased query
  // contains): a text matches only within one message (see search-rows.ts).
  const q = param(containsPattern(opts.query));
  const current = `k.session_id = s.id AND k.epoch = s.search_epoch AND k.text LIKE ${q}`;
  let candidates: string[] = [];
  // Walk: every current chunk of each session in list order.
  let chunkMatch = `EXISTS (SELECT 1 FROM ${s}.search_chunks AS k WHERE ${current})`;
  if (plan.kind === 'words') {
    // Words: the sessions with a matching words row (any epoch: a superset) or pending
    // rows, and of their chunks only those of the blocks whose current words match.
    const words = param(plan.wordsPattern);
    candidates = [
      `s.id IN (SELECT w.session_id FROM ${s}.search_words AS w WHERE w.words LIKE ${words}
  UNION SELECT p.session_id FROM ${s}.search_pending AS p)`,
    ];
    chunkMatch = `EXISTS (SELECT 1 FROM ${s}.search_words AS w JOIN ${s}.search_chunks AS k
      ON k.session_id = w.session_id AND k.epoch = w.epoch
      AND k.first_seq >= w.block * ${BLOCK_MESSAGES} AND k.first_seq < (w.block + 1) * ${BLOCK_MESSAGES}
    WHERE w.session_id = s.id AND w.epoch = s.search_epoch AND w.block >= 0
      AND w.words LIKE ${words} AND ${current})`;
  }
  const text = `SELECT ${headerColumns('s', s)}
FROM (SELECT s.* ${filtered(candidates)} ${order} OFFSET 0) AS s
WHERE s.title_search LIKE ${q}
  OR ${chunkMatch}
  OR EXISTS (SELECT 1 FROM ${s}.search_pending AS p
    WHERE p.session_id = s.id AND p.seq >= 0 AND p.epoch = s.search_epoch AND p.text LIKE ${q})
${order}
${paging()}`;
  return { text, values };
}
