// The session list: one `list` call per page (summaries only, never a transcript), newest
// first, keyset paged in both directions, with the filters and the search box of `list`.
import type { ListOptions, SessionSummary } from '@sessionkit/core';
import { formatCursor } from '../commands/parsers.js';
import { shortDate } from '../runtime/output.js';
import { html, type SafeHtml } from './html.js';
import { pageHtml } from './layout.js';
import { listHref, sessionHref } from './links.js';
import { LIST_PAGE, type ListRequest, listRequest } from './params.js';
import { htmlReply, type Reply } from './reply.js';
import type { RequestContext } from './route-context.js';

/** One page of summaries and whether pages exist on either side. */
interface ListPage {
  rows: SessionSummary[];
  hasNewer: boolean;
  hasOlder: boolean;
}

/**
 * The page a request asks for. One extra row tells whether another page follows; a
 * "newer" page is read oldest-first from its cursor and turned around.
 */
async function readPage(ctx: RequestContext, request: ListRequest): Promise<ListPage> {
  const base: ListOptions = { ...request.filters, limit: request.limit + 1 };
  if (request.before) {
    const got = await ctx.store.list({ ...base, oldestFirst: true, startAfter: request.before });
    return {
      rows: got.slice(0, request.limit).reverse(),
      hasNewer: got.length > request.limit,
      hasOlder: true,
    };
  }
  const got = await ctx.store.list(request.after ? { ...base, startAfter: request.after } : base);
  return {
    rows: got.slice(0, request.limit),
    hasNewer: request.after !== undefined,
    hasOlder: got.length > request.limit,
  };
}

/** The filters of `request` as query parameters (for links that keep them). */
function filterParams(request: ListRequest): Record<string, string | number | undefined> {
  const f = request.filters;
  return {
    q: f.query,
    folder: f.folder,
    status: f.status,
    parent: f.parentId,
    archived: f.includeArchived ? 1 : undefined,
    limit: request.limit === LIST_PAGE ? undefined : request.limit,
  };
}

function filterForm(request: ListRequest): SafeHtml {
  const f = request.filters;
  return html`<form class="filters" method="get" action="/" role="search">
<input type="search" name="q" value="${f.query ?? ''}" placeholder="Search titles and messages" aria-label="Search titles and messages">
<input name="folder" value="${f.folder ?? ''}" placeholder="folder" aria-label="Folder">
<input name="status" value="${f.status ?? ''}" placeholder="status" aria-label="Status" size="10">
<input name="parent" value="${f.parentId ?? ''}" placeholder="branches of (id)" aria-label="Branches of session" size="16">
<label><input type="checkbox" name="archived" value="1"${f.includeArchived ? html` checked` : ''}> archived</label>
<button type="submit">Search</button> <a href="/">clear</a>
</form>`;
}

function money(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

function rowHtml(s: SessionSummary, request: ListRequest): SafeHtml {
  const keep = filterParams(request);
  const branchOf = s.parentId
    ? html`<span class="badge">branch of <a href="${listHref({ ...keep, parent: s.parentId })}">${s.parentId}</a>${s.branchedAtTurn !== undefined ? ` at message ${s.branchedAtTurn}` : ''}</span>`
    : '';
  const branches = s.children.length
    ? html`<a class="badge" href="${listHref({ parent: s.id, archived: 1 })}">${s.children.length} ${s.children.length === 1 ? 'branch' : 'branches'}</a>`
    : '';
  return html`<tr>
<td><a class="title" href="${sessionHref(s.id)}">${s.title || '(untitled)'}</a>${s.archivedAt ? html`<span class="badge archived">archived</span>` : ''}${branchOf}${branches}<div class="id">${s.id}</div></td>
<td>${s.folder ? html`<a href="${listHref({ ...keep, folder: s.folder })}">${s.folder}</a>` : ''}</td>
<td><a href="${listHref({ ...keep, status: s.status })}">${s.status}</a></td>
<td class="num">${s.messageCount.toLocaleString('en-US')}</td>
<td class="num">${s.turnCount.toLocaleString('en-US')}</td>
<td class="num">${s.tokenCount.toLocaleString('en-US')}</td>
<td class="num">${money(s.costUsd)}</td>
<td class="num"><time datetime="${s.updatedAt.toISOString()}">${shortDate(s.updatedAt)}</time></td>
</tr>`;
}

function pager(page: ListPage, request: ListRequest): SafeHtml {
  const keep = filterParams(request);
  const first = page.rows[0];
  const last = page.rows[page.rows.length - 1];
  const newer =
    page.hasNewer && first
      ? html`<a rel="prev" href="${listHref({ ...keep, before: formatCursor(first) })}">← newer</a>`
      : '';
  const older =
    page.hasOlder && last
      ? html`<a rel="next" href="${listHref({ ...keep, after: formatCursor(last) })}">older →</a>`
      : '';
  const top = page.hasNewer ? html`<a href="${listHref(keep)}">newest</a>` : '';
  return html`<nav class="pager">${newer}${top}${older}</nav>`;
}

function heading(request: ListRequest): string {
  const f = request.filters;
  if (f.query !== undefined) return `Sessions matching “${f.query}”`;
  if (f.parentId !== undefined) return `Branches of ${f.parentId}`;
  return 'Sessions';
}

function listBody(page: ListPage, request: ListRequest): SafeHtml {
  const table = page.rows.length
    ? html`<table class="sessions"><thead><tr><th>Title</th><th>Folder</th><th>Status</th><th class="num">Messages</th><th class="num">Turns</th><th class="num">Tokens</th><th class="num">Cost</th><th class="num">Updated (UTC)</th></tr></thead>
<tbody>${page.rows.map((s) => rowHtml(s, request))}</tbody></table>`
    : html`<p class="notice">${request.filters.query !== undefined ? 'No session matches.' : 'No sessions.'}</p>`;
  return html`<h1>${heading(request)}</h1>${filterForm(request)}
<p class="facts">${page.rows.length} sessions on this page, most recently updated first${request.filters.includeArchived ? ', archived included' : ''}</p>
${table}${pager(page, request)}`;
}

/** `GET /`: the session list. */
export async function listRoute(ctx: RequestContext): Promise<Reply> {
  const request = listRequest(ctx.url);
  const page = await readPage(ctx, request);
  ctx.viewer.summaries.remember(page.rows);
  return htmlReply(pageHtml(ctx.viewer.frame, heading(request), listBody(page, request)));
}
