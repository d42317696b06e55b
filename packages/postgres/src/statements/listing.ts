// The statement of `list`: filters, keyset cursor, search and paging. Rows: `HeaderRow`.
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import { headerColumns, type Statement } from '../sql.js';

/** `value` as a LIKE pattern matching it literally anywhere: `\`, `%` and `_` escaped. */
export function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The statement `list` runs (rows: `HeaderRow` of rows.ts): filters, keyset cursor, search
 * and paging over `sessions` and `search_rows` only — it never references the `messages`
 * table. Exported for the EXPLAIN test. `s` is the quoted schema.
 */
export function buildListQuery(s: string, opts: NormalizedListOptions): Statement {
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
  if (opts.query !== undefined) {
    // The query is lower-cased by core (JS toLowerCase), like the stored search text, in
    // which each message's text follows core's separator ("A", which no lower-cased query
    // contains): a row matches only within one message (see search-rows.ts).
    where.push(
      `s.id IN (SELECT r.session_id FROM ${s}.search_rows AS r WHERE r.text LIKE ${param(containsPattern(opts.query))})`,
    );
  }
  const dir = opts.oldestFirst ? 'ASC' : 'DESC';
  const text = `SELECT ${headerColumns('s', s)}
FROM ${s}.sessions AS s
${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
ORDER BY s.updated_at ${dir}, s.id ${dir}
LIMIT ${param(opts.limit)} OFFSET ${param(opts.offset)}`;
  return { text, values };
}
