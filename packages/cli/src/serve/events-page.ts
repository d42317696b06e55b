// A session's event log: a table of events in sequence order, a page at a time.
import { isEventLog, type SessionEvent } from '@sessionkit/core';
import { shortDate } from '../runtime/output.js';
import { foldedJson } from './fold.js';
import { html, type SafeHtml } from './html.js';
import { pageHtml } from './layout.js';
import { eventsHref, sessionHref } from './links.js';
import { intParam, sessionIdParam } from './params.js';
import { HttpError, htmlReply, type Reply } from './reply.js';
import type { RequestContext } from './route-context.js';

/** Events on the session page; the events page shows this many per page. */
export const EVENTS_SHOWN = 50;
const EVENTS_PAGE = 200;

/** A table of events, and a link to the ones after them when `more`. */
export function eventsTable(id: string, events: readonly SessionEvent[], more: boolean): SafeHtml {
  if (events.length === 0) return html`<p class="facts">(no events)</p>`;
  const last = events[events.length - 1];
  const next =
    more && last
      ? html`<p><a href="${eventsHref(id, last.sequence)}">events after #${last.sequence} →</a></p>`
      : '';
  return html`<table class="kv events"><tbody>${events.map(
    (e) =>
      html`<tr><td>#${e.sequence}<br><time datetime="${e.at.toISOString()}">${shortDate(e.at)}</time></td><td><b>${e.type}</b> <span class="facts">rev ${e.revision}</span>${e.payload === null ? '' : foldedJson(e.payload)}</td></tr>`,
  )}</tbody></table>${next}`;
}

/** The first events of a session and whether more follow (`undefined`: no event log). */
export async function firstEvents(
  ctx: RequestContext,
  id: string,
): Promise<{ events: SessionEvent[]; more: boolean } | undefined> {
  if (!isEventLog(ctx.store)) return undefined;
  const got = await ctx.store.events(id, { limit: EVENTS_SHOWN + 1 });
  return { events: got.slice(0, EVENTS_SHOWN), more: got.length > EVENTS_SHOWN };
}

/** `GET /s/:id/events?after=N`: a page of events after sequence N. */
export async function eventsRoute(ctx: RequestContext, [rawId = '']: string[]): Promise<Reply> {
  const id = sessionIdParam(rawId);
  if (!isEventLog(ctx.store)) throw new HttpError(404, 'this store keeps no event log');
  const after = intParam(ctx.url, 'after', Number.MAX_SAFE_INTEGER) ?? 0;
  const got = await ctx.store.events(id, { afterSequence: after, limit: EVENTS_PAGE + 1 });
  const table = eventsTable(id, got.slice(0, EVENTS_PAGE), got.length > EVENTS_PAGE);
  const body = html`<h1>Events${after ? ` after #${after}` : ''}</h1><p><a href="${sessionHref(id)}">← back to ${id}</a></p>${table}`;
  return htmlReply(pageHtml(ctx.viewer.frame, `Events of ${id}`, body));
}
