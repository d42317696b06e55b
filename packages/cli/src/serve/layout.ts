// The page around every view: the head with the viewer's own stylesheet, script and icon
// (no other resource), and a top bar naming the store without credentials.
import type { Assets } from './assets.js';
import { html, type SafeHtml } from './html.js';

/** What every page shows besides its own content. */
export interface PageFrame {
  assets: Assets;
  /** The store's URL without credentials (`redactUrl`). */
  storeDisplay: string;
}

/** A whole HTML document: `title` in the tab, `body` under the top bar. */
export function pageHtml(frame: PageFrame, title: string, body: SafeHtml): SafeHtml {
  const { assets } = frame;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · sessionkit</title>
<link rel="stylesheet" href="${assets.href('viewer.css')}">
<link rel="icon" type="image/svg+xml" href="${assets.href('favicon.svg')}">
<script src="${assets.href('viewer.js')}" defer></script>
</head>
<body>
<header class="top"><a class="brand" href="/">sessionkit</a><span class="store" title="store">${frame.storeDisplay}</span><span class="ro">read-only</span></header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** A short error page body: what went wrong and a way back. */
export function errorBody(status: number, message: string): SafeHtml {
  return html`<h1>${status === 404 ? 'Not found' : 'Cannot show this'}</h1><p class="notice error">${message}</p><p><a href="/">All sessions</a></p>`;
}
