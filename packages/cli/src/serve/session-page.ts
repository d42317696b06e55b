// A session's page: its header (title, folder, model, counters, lineage), the last window
// of its transcript (earlier windows on demand), metadata, state, runtime status, events,
// and its branch tree (filled in by the page script). The store calls run in parallel and
// none reads the whole transcript.
import {
  isRuntimeStatusStore,
  type JsonValue,
  loadMessageWindow,
  type MessageWindow,
  type SessionEvent,
  type SessionSummary,
} from '@sessionkit/core';
import { childrenOf } from '../commands/tree-walk.js';
import { shortDate } from '../runtime/output.js';
import { eventsTable, firstEvents } from './events-page.js';
import { foldedJson } from './fold.js';
import { html, type SafeHtml } from './html.js';
import { pageHtml } from './layout.js';
import { listHref, partHref, sessionHref, treeHref } from './links.js';
import { sessionIdParam, windowRequest } from './params.js';
import { htmlReply, type Reply } from './reply.js';
import type { RequestContext } from './route-context.js';
import { transcriptHtml } from './transcript-html.js';

/** Everything a session page shows, read in one go. */
interface SessionView {
  summary: SessionSummary;
  window: MessageWindow<unknown>;
  branches: SessionSummary[];
  /** `undefined`: the store has no runtime status; `null`: none saved. */
  runtimeStatus: JsonValue | null | undefined;
  events: { events: SessionEvent[]; more: boolean } | undefined;
}

function fact(label: string, value: string | number | undefined | SafeHtml): SafeHtml | string {
  if (value === undefined || value === '') return '';
  return html`<span>${label} <b>${typeof value === 'number' ? value.toLocaleString('en-US') : value}</b></span>`;
}

function headHtml(s: SessionSummary): SafeHtml {
  const model = s.model ? `${s.model}${s.provider ? ` (${s.provider})` : ''}` : undefined;
  const folder = s.folder
    ? html`<a href="${listHref({ folder: s.folder })}">${s.folder}</a>`
    : undefined;
  const lineage = s.parentId
    ? html`<p class="lineage">⎇ branch of <a href="${sessionHref(s.parentId)}">${s.parentId}</a>${s.branchedAtTurn !== undefined ? ` at message ${s.branchedAtTurn}` : ''}</p>`
    : '';
  return html`<h1>${s.title || '(untitled)'}</h1>
<div class="id"><a href="${sessionHref(s.id)}" title="permalink">${s.id}</a></div>
<div class="head-facts">${[
    fact('folder', folder),
    fact('model', model),
    fact('status', s.status),
    fact('mode', s.mode),
    fact('messages', s.messageCount),
    fact('turns', s.turnCount),
    fact('tokens', s.tokenCount),
    fact('cost', `$${s.costUsd.toFixed(4)}`),
    fact('created', shortDate(s.createdAt)),
    fact('updated', shortDate(s.updatedAt)),
    fact('revision', s.revision),
    fact('archived', s.archivedAt ? shortDate(s.archivedAt) : undefined),
  ]}</div>${lineage}`;
}

function metadataHtml(metadata: Record<string, string>): SafeHtml {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return html`<p class="facts">(none)</p>`;
  return html`<table class="kv"><tbody>${entries.map(([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`)}</tbody></table>`;
}

function jsonSection(value: JsonValue | null | undefined, absent: string): SafeHtml {
  if (value === undefined || value === null) return html`<p class="facts">${absent}</p>`;
  return foldedJson(value);
}

function sideHtml(view: SessionView): SafeHtml {
  const { summary: s } = view;
  const status =
    view.runtimeStatus === undefined ? 'this store keeps no runtime status' : '(none saved)';
  const events = view.events
    ? eventsTable(s.id, view.events.events, view.events.more)
    : html`<p class="facts">this store keeps no event log</p>`;
  return html`<aside class="side">
<section id="tree" data-lazy="${partHref(treeHref(s.id), 'tree')}"><h2>Branch tree</h2><a href="${treeHref(s.id)}">Show the branch tree</a></section>
<section><h2>Metadata</h2>${metadataHtml(s.metadata)}</section>
<section><h2>State</h2>${jsonSection(s.state, '(none)')}</section>
<section><h2>Runtime status</h2>${jsonSection(view.runtimeStatus, status)}</section>
<section><h2>Events</h2>${events}</section>
</aside>`;
}

/**
 * The session's summary and its branches. A summary lists its children's ids, so
 * `list({ parentId })` runs only for a session that has branches.
 */
async function summaryAndBranches(
  ctx: RequestContext,
  id: string,
): Promise<{ summary: SessionSummary; branches: SessionSummary[] }> {
  const summary = await ctx.viewer.summaries.find(ctx.store, id);
  const branches = summary.children.length > 0 ? await childrenOf(ctx.store, id) : [];
  ctx.viewer.summaries.remember(branches);
  return { summary, branches };
}

async function readView(ctx: RequestContext, id: string): Promise<SessionView> {
  const { store } = ctx;
  const [{ summary, branches }, window, runtimeStatus, events] = await Promise.all([
    summaryAndBranches(ctx, id),
    loadMessageWindow(store, id, windowRequest(ctx.url)),
    isRuntimeStatusStore(store) ? store.loadRuntimeStatus(id) : Promise.resolve(undefined),
    firstEvents(ctx, id),
  ]);
  return { summary, window, branches, runtimeStatus, events };
}

/**
 * `GET /s/:id`: the session page, its last messages (`?offset=&limit=`: another window).
 * `?part=messages` answers the window alone, for the page script's "load earlier".
 */
export async function sessionRoute(ctx: RequestContext, [rawId = '']: string[]): Promise<Reply> {
  const id = sessionIdParam(rawId);
  const base = { sessionId: id, remoteImages: ctx.viewer.remoteImages };
  if (ctx.url.searchParams.get('part') === 'messages') {
    const [window, { branches }] = await Promise.all([
      loadMessageWindow(ctx.store, id, windowRequest(ctx.url)),
      summaryAndBranches(ctx, id),
    ]);
    return htmlReply(transcriptHtml(window, { ...base, branches, fragment: true }));
  }
  const view = await readView(ctx, id);
  const transcript = transcriptHtml(view.window, {
    ...base,
    branches: view.branches,
    fragment: false,
  });
  const body = html`<div class="session-grid"><div class="main-col">${headHtml(view.summary)}
<h2>Transcript <span class="facts">(${view.window.messageCount.toLocaleString('en-US')} messages)</span></h2>
${transcript}<p id="latest"></p></div>
${sideHtml(view)}</div>`;
  return htmlReply(pageHtml(ctx.viewer.frame, view.summary.title || id, body));
}
