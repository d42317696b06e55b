// Long values (tool output, JSON state, runtime status) are folded under a one-line
// summary, and anything huge is cut, so one 20 MB tool result cannot make a page
// unusable; the whole value stays one click away as raw JSON.
import { html, type SafeHtml } from './html.js';

/** Text longer than this (characters) is folded. */
export const FOLD_CHARS = 800;
/** Text with more lines than this is folded. */
export const FOLD_LINES = 12;
/** At most this many characters of one value are put in a page. */
export const MAX_SHOWN_CHARS = 100_000;

/** `value` as indented JSON (`undefined` as the word, since JSON has none). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}

function lineCount(text: string, stopAt: number): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0 && lines <= stopAt; i = text.indexOf('\n', i + 1)) {
    lines++;
  }
  return lines;
}

/** Message text (what people read) is folded only past these sizes. */
export const FOLD_PROSE_CHARS = 20_000;
export const FOLD_PROSE_LINES = 400;

/** True when `text` has more than `chars` characters or more than `lines` lines. */
export function isLong(text: string, chars = FOLD_CHARS, lines = FOLD_LINES): boolean {
  return text.length > chars || lineCount(text, lines) > lines;
}

/** `text` cut to `MAX_SHOWN_CHARS`, with a note (and a link to the raw value) when cut. */
export function clippedText(text: string, rawHref?: string): SafeHtml {
  if (text.length <= MAX_SHOWN_CHARS) return html`${text}`;
  const rest = text.length - MAX_SHOWN_CHARS;
  const note = `… ${rest.toLocaleString('en-US')} more characters`;
  return html`${text.slice(0, MAX_SHOWN_CHARS)}<span class="cut">${note}${rawHref ? html` — <a href="${rawHref}">raw JSON</a>` : ''}</span>`;
}

/** The summary line of folded text: its first non-empty line, cut short, and its size. */
function summaryLine(text: string): string {
  const first = text.split('\n').find((l) => l.trim() !== '') ?? '';
  const head = first.length > 100 ? `${first.slice(0, 99)}…` : first;
  const size = `${lineCount(text, Number.POSITIVE_INFINITY).toLocaleString('en-US')} lines, ${text.length.toLocaleString('en-US')} chars`;
  return `${head.trim()} (${size})`;
}

/** Options of `foldedPre`. */
export interface FoldOptions {
  /** Class of the `<pre>`. */
  className?: string;
  /** Link to the whole value, shown when it is cut. */
  rawHref?: string | undefined;
  /** Fold even when short (reasoning). */
  alwaysFold?: boolean;
  /** Prose (message text): fold only past `FOLD_PROSE_CHARS` / `FOLD_PROSE_LINES`. */
  prose?: boolean;
  /** The summary text of a fold; default: the first line and the size. */
  summary?: string;
}

/** `text` in a `<pre>`, folded under a summary line when long. */
export function foldedPre(text: string, options: FoldOptions = {}): SafeHtml {
  const pre = html`<pre class="${options.className ?? 'value'}">${clippedText(text, options.rawHref)}</pre>`;
  const long = options.prose ? isLong(text, FOLD_PROSE_CHARS, FOLD_PROSE_LINES) : isLong(text);
  if (!options.alwaysFold && !long) return pre;
  return html`<details class="fold"><summary>${options.summary ?? summaryLine(text)}</summary>${pre}</details>`;
}

/** A JSON value, indented, folded when long. */
export function foldedJson(value: unknown, options: FoldOptions = {}): SafeHtml {
  return foldedPre(prettyJson(value), { className: 'json', ...options });
}
