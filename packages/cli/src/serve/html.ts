// The viewer's one way to make HTML. Every page is built with the `html` tagged template:
// each interpolated value is escaped unless it is itself the result of `html`, so a
// stored title or message (`<script>`, `" onerror=`) can only ever become text.

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * `text` with `& < > " '` replaced by entities: safe as element content and inside a
 * quoted attribute value (templates always quote attributes).
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const brand = Symbol('SafeHtml');

/** HTML made by `html` (and only by it): interpolated as is, never escaped twice. */
export class SafeHtml {
  readonly [brand] = true;
  readonly #text: string;

  /** @internal Use `html`; a `SafeHtml` from any other source would bypass escaping. */
  constructor(text: string, key: typeof brand) {
    if (key !== brand) throw new TypeError('SafeHtml is made by html`…` only');
    this.#text = text;
  }

  /** The markup. */
  toString(): string {
    return this.#text;
  }
}

/** What a template accepts: text (escaped), numbers, nothing, markup, or lists of them. */
export type HtmlValue =
  | SafeHtml
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.toString();
  if (value === null || value === undefined || value === false || value === true) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/**
 * A tagged template producing `SafeHtml`: the literal parts are markup, every
 * `${value}` is escaped (arrays are joined, `null`/`undefined`/booleans render nothing,
 * nested `html` passes through). Attribute values must be written in double quotes.
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out, brand);
}

/** URL schemes a link taken from stored data may use; anything else renders as text. */
const LINKABLE = /^(https?:|mailto:)/i;

/** True when `url` (from a message) is safe as a link target: http(s) or mailto only. */
export function isLinkableUrl(url: string): boolean {
  return LINKABLE.test(url.trim());
}

/**
 * A link to a URL taken from stored data: http(s)/mailto only (a `javascript:` or `data:`
 * URL renders as plain text), opened in a new tab without a referrer or an opener.
 */
export function externalLink(url: string, label: string = url): SafeHtml {
  if (!isLinkableUrl(url)) return html`<span class="url">${label}</span>`;
  return html`<a class="url" href="${url.trim()}" target="_blank" rel="noreferrer noopener">${label}</a>`;
}
