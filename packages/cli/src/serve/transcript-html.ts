// A window of a transcript as HTML: each message with its role and blocks, each tool call
// beside its result (when both are in the window), long output folded, images through the
// viewer's image route, and a marker where each branch leaves the transcript.
import type { MessageWindow, SessionSummary } from '@sessionkit/core';
import { foldedJson, foldedPre } from './fold.js';
import { externalLink, html, isLinkableUrl, type SafeHtml } from './html.js';
import {
  imageHref,
  MESSAGE_PAGE,
  messageHref,
  partHref,
  rawMessageHref,
  sessionHref,
  windowHref,
} from './links.js';
import { type Block, readMessage, type ToolOutcome, type ViewMessage } from './messages.js';

/** What rendering a window needs besides the messages. */
export interface TranscriptContext {
  sessionId: string;
  /** Show http(s) images from the web (off: they are links). */
  remoteImages: boolean;
  /** The session's branches, for the markers where they leave the transcript. */
  branches: readonly SessionSummary[];
  /** A fragment for the page script: no "later messages" link (those are on the page). */
  fragment: boolean;
}

/** A tool result found in the window, by the id of the call it answers. */
interface PairedResult {
  outcome: ToolOutcome;
  index: number;
}

/** Per-message rendering state: the message's position and the results paired so far. */
interface MessageScope {
  ctx: TranscriptContext;
  index: number;
  results: Map<string, PairedResult>;
  /** Call ids whose result is shown beside the call (their own message shows a stub). */
  paired: Map<string, number>;
}

function roleClass(role: string): string {
  return `role-${role.toLowerCase().replace(/[^a-z0-9-]/g, '') || 'other'}`;
}

function imageHtml(block: Extract<Block, { kind: 'image' }>, scope: MessageScope): SafeHtml {
  const { source } = block;
  const alt = `image ${block.image + 1} of message ${scope.index + 1}`;
  if (source.kind === 'inline') {
    const src = imageHref(scope.ctx.sessionId, scope.index, block.image);
    return html`<img class="image" src="${src}" alt="${alt}" loading="lazy">`;
  }
  if (scope.ctx.remoteImages && /^https?:/i.test(source.url)) {
    return html`<img class="image" src="${source.url}" alt="${alt}" loading="lazy" referrerpolicy="no-referrer">`;
  }
  const hint = isLinkableUrl(source.url)
    ? ' (remote images are off: sessionkit serve --remote-images)'
    : '';
  return html`<div class="image-link">image: ${externalLink(source.url)}<span class="hint">${hint}</span></div>`;
}

function outcomeHtml(outcome: ToolOutcome, scope: MessageScope): SafeHtml {
  const body =
    outcome.output.length === 0
      ? html`<p class="empty">(empty)</p>`
      : blocksHtml(outcome.output, scope, true);
  return html`<div class="tool-result${outcome.isError ? ' error' : ''}"><div class="tool-head">← ${outcome.isError ? 'error' : 'result'}</div>${body}</div>`;
}

function toolCallHtml(block: Extract<Block, { kind: 'tool-call' }>, scope: MessageScope): SafeHtml {
  const found = block.id === undefined ? undefined : scope.results.get(block.id);
  const outcome = block.result ?? found?.outcome;
  if (found && block.id !== undefined) scope.paired.set(block.id, scope.index);
  const call = html`<div class="tool-call"><div class="tool-head">→ <b class="tool-name">${block.name}</b>${block.id ? html` <span class="call-id">${block.id}</span>` : ''}</div>${foldedJson(block.input, { rawHref: rawMessageHref(scope.ctx.sessionId, scope.index) })}</div>`;
  const result = outcome
    ? outcomeHtml(outcome, scope)
    : html`<div class="tool-result pending"><div class="tool-head">← no result in view</div></div>`;
  const from = found
    ? html`<a class="result-from" href="#m${found.index}">result: message #${found.index + 1}</a>`
    : '';
  return html`<div class="tool-pair"${block.id ? html` id="call-${scope.index}-${block.id}"` : ''}>${call}${result}${from}</div>`;
}

function toolResultHtml(
  block: Extract<Block, { kind: 'tool-result' }>,
  scope: MessageScope,
): SafeHtml {
  const callAt = block.callId === undefined ? undefined : scope.paired.get(block.callId);
  if (callAt !== undefined) {
    return html`<p class="tool-result-stub">result of ${block.name ?? 'the tool call'} — shown beside its call in <a href="#m${callAt}">message #${callAt + 1}</a></p>`;
  }
  const answers = block.callId
    ? html`<div class="answers">answers call <span class="call-id">${block.callId}</span></div>`
    : '';
  return html`<div class="tool-pair lone">${answers}${outcomeHtml(block.outcome, scope)}</div>`;
}

function blockHtml(block: Block, scope: MessageScope, inOutput: boolean): SafeHtml {
  const raw = rawMessageHref(scope.ctx.sessionId, scope.index);
  switch (block.kind) {
    case 'text':
      return inOutput
        ? foldedPre(block.text, { className: 'output', rawHref: raw })
        : foldedPre(block.text, { className: 'text', rawHref: raw, prose: true });
    case 'reasoning':
      return html`<div class="reasoning">${foldedPre(block.text, { className: 'text', rawHref: raw, alwaysFold: true, summary: `reasoning (${block.text.length.toLocaleString('en-US')} chars)` })}</div>`;
    case 'image':
      return imageHtml(block, scope);
    case 'file':
      return html`<div class="file">file <b>${block.name}</b> <span class="media-type">${block.mediaType}</span>${block.url && isLinkableUrl(block.url) ? html` ${externalLink(block.url, 'open')}` : ''}</div>`;
    case 'link':
      return html`<div class="source">source: ${externalLink(block.url, block.title || block.url)}</div>`;
    case 'tool-call':
      return toolCallHtml(block, scope);
    case 'tool-result':
      return toolResultHtml(block, scope);
    case 'data':
      return html`<div class="data"><span class="label">${block.label}</span>${foldedJson(block.value, { rawHref: raw })}</div>`;
  }
}

function blocksHtml(blocks: readonly Block[], scope: MessageScope, inOutput = false): SafeHtml {
  return html`${blocks.map((b) => blockHtml(b, scope, inOutput))}`;
}

function messageHtml(message: ViewMessage, scope: MessageScope): SafeHtml {
  const { sessionId } = scope.ctx;
  const i = scope.index;
  return html`<article class="message ${roleClass(message.role)}" id="m${i}">
<header class="message-head"><a class="message-no" href="${messageHref(sessionId, i)}">#${i + 1}</a> <span class="role">${message.role}</span>${message.name ? html` <span class="speaker">${message.name}</span>` : ''} <a class="raw" href="${rawMessageHref(sessionId, i)}">JSON</a></header>
${blocksHtml(message.blocks, scope)}
</article>`;
}

function branchMarkers(branches: readonly SessionSummary[]): SafeHtml {
  return html`${branches.map(
    (b) =>
      html`<div class="branch-point">⎇ branch <a href="${sessionHref(b.id)}">${b.title || b.id}</a> continues from here <span class="facts">(${b.messageCount} messages${b.archivedAt ? ', archived' : ''})</span></div>`,
  )}`;
}

/** Results in the window keyed by call id: the calls' results, to show beside the calls. */
function resultsByCall(
  messages: readonly ViewMessage[],
  offset: number,
): Map<string, PairedResult> {
  const results = new Map<string, PairedResult>();
  messages.forEach((m, k) => {
    for (const b of m.blocks) {
      if (b.kind === 'tool-result' && b.callId !== undefined && !results.has(b.callId)) {
        results.set(b.callId, { outcome: b.outcome, index: offset + k });
      }
    }
  });
  return results;
}

function earlierLink(ctx: TranscriptContext, offset: number): SafeHtml {
  if (offset === 0) return html``;
  const from = Math.max(0, offset - MESSAGE_PAGE);
  const href = windowHref(ctx.sessionId, from, offset - from);
  return html`<p class="earlier"><a class="load-earlier" href="${href}" data-part="${partHref(href, 'messages')}">Load ${offset - from} earlier messages</a> <span class="facts">${offset.toLocaleString('en-US')} before these</span> · <a href="${windowHref(ctx.sessionId, 0, MESSAGE_PAGE)}">first messages</a></p>`;
}

function laterLink(ctx: TranscriptContext, end: number, count: number): SafeHtml {
  if (ctx.fragment || end >= count) return html``;
  return html`<p class="later"><a href="${windowHref(ctx.sessionId, end, MESSAGE_PAGE)}">Next ${Math.min(MESSAGE_PAGE, count - end)} messages</a> · <a href="${sessionHref(ctx.sessionId)}">latest</a> <span class="facts">${(count - end).toLocaleString('en-US')} after these</span></p>`;
}

/**
 * A window of messages (its absolute `offset` from the store) with links to the messages
 * before and after it, and the markers of branches that start inside it.
 */
export function transcriptHtml(window: MessageWindow<unknown>, ctx: TranscriptContext): SafeHtml {
  const views = window.messages.map(readMessage);
  const results = resultsByCall(views, window.offset);
  const paired = new Map<string, number>();
  const at = new Map<number, SessionSummary[]>();
  for (const b of ctx.branches) {
    const k = b.branchedAtTurn ?? window.messageCount;
    at.set(k, [...(at.get(k) ?? []), b]);
  }
  const parts: SafeHtml[] = [earlierLink(ctx, window.offset)];
  if (window.offset === 0) parts.push(branchMarkers(at.get(0) ?? []));
  views.forEach((view, k) => {
    const index = window.offset + k;
    parts.push(messageHtml(view, { ctx, index, results, paired }));
    parts.push(branchMarkers(at.get(index + 1) ?? []));
  });
  if (window.messageCount === 0) parts.push(html`<p class="empty">(no messages)</p>`);
  parts.push(laterLink(ctx, window.offset + views.length, window.messageCount));
  return html`<div class="window" data-offset="${window.offset}" data-count="${window.messageCount}">${parts}</div>`;
}
