// The transcript reads: load (header and messages), loadMessages (all of them) and the
// windows of loadMessages / loadMessageWindow, each one statement (one MVCC snapshot).
import type { Session } from '@sessionkit/core';
import type { NormalizedMessageWindow } from '@sessionkit/core/adapter';
import { type HeaderRow, parseJson, parseMessageRows, summaryOf } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import {
  type ParsedWindow,
  parseWindow,
  type WindowRow,
  windowStatement,
} from './message-window.js';

/** The session with its messages and children. Throws `not_found`, `corrupt`, `unavailable`. */
export async function loadSession(ctx: StoreContext, id: string): Promise<Session<unknown>> {
  ctx.stats.messageBodyReads++;
  const r = await ctx.db.query(ctx.statements.sessions.load, [id], { doing: 'load' });
  const first = r.rows[0];
  if (!first) throw errors.notFound(id);
  if (first.header === null) throw errors.corrupt(id, 'message rows do not start at 0');
  const summary = summaryOf(parseJson(id, first.header, 'header') as unknown as HeaderRow);
  const { messageCount: _count, ...rest } = summary;
  const rows = first.seq === null ? [] : r.rows;
  return { ...rest, messages: parseMessageRows(id, rows) };
}

/** A window of the history read by key range. Throws `not_found`, `corrupt`, `unavailable`. */
export async function loadWindow(
  ctx: StoreContext,
  id: string,
  window: NormalizedMessageWindow,
): Promise<ParsedWindow> {
  ctx.stats.messageBodyReads++;
  const r = await ctx.db.queryConfig<WindowRow>(
    windowStatement(ctx.statements.s, ctx.statements.windowName, id, window),
    { doing: 'loadMessages' },
  );
  return parseWindow(id, window, r.rows);
}
