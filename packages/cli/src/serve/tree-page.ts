// The branch tree as HTML: nested lists, each node a link to its session, with its branch
// point, message count and merge state; a page of its own and a fragment for the session
// page's side panel.
import { type BranchTree, branchTree, MAX_TREE_NODES, type TreeNode } from './branch-tree.js';
import { html, type SafeHtml } from './html.js';
import { pageHtml } from './layout.js';
import { sessionHref, treeHref } from './links.js';
import { sessionIdParam } from './params.js';
import { htmlReply, type Reply } from './reply.js';
import type { RequestContext } from './route-context.js';

function nodeHtml(node: TreeNode, current: string): SafeHtml {
  const s = node.summary;
  const facts = [
    s.branchedAtTurn !== undefined && node.merge ? `at message ${s.branchedAtTurn}` : '',
    `${s.messageCount.toLocaleString('en-US')} messages`,
  ].filter((f) => f !== '');
  const merge = node.merge
    ? html`<span class="badge ${node.merge.kind}" title="merge state">${node.merge.label}</span>`
    : '';
  const children = node.children.length
    ? html`<ul>${node.children.map((c) => nodeHtml(c, current))}</ul>`
    : '';
  return html`<li${s.id === current ? html` class="current"` : ''}><span class="node"><a href="${sessionHref(s.id)}">${s.title || s.id}</a> <span class="facts">· ${facts.join(' · ')}</span>${s.archivedAt ? html`<span class="badge archived">archived</span>` : ''}${merge}</span>${children}</li>`;
}

/** The tree as a nested list, `current` marked. */
export function treeHtml(tree: BranchTree, current: string): SafeHtml {
  const cut = tree.truncated
    ? html`<p class="facts">Only the first ${MAX_TREE_NODES} sessions of this tree are shown.</p>`
    : '';
  return html`<ul class="tree">${nodeHtml(tree.root, current)}</ul>${cut}`;
}

/** `GET /s/:id/tree`: the branch tree holding the session (`?part=tree`: the list only). */
export async function treeRoute(ctx: RequestContext, [rawId = '']: string[]): Promise<Reply> {
  const id = sessionIdParam(rawId);
  const tree = await branchTree(ctx.store, ctx.viewer.summaries, id);
  const body = treeHtml(tree, id);
  if (ctx.url.searchParams.get('part') === 'tree') {
    return htmlReply(
      html`<h2>Branch tree</h2>${body}<p><a href="${treeHref(id)}">open as a page</a></p>`,
    );
  }
  const page = html`<h1>Branch tree</h1><p><a href="${sessionHref(id)}">← back to ${id}</a></p>${body}`;
  return htmlReply(pageHtml(ctx.viewer.frame, `Tree of ${id}`, page));
}
