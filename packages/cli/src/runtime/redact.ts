import { redactUrl } from '@sessionkit/core';

// Anything that looks like a URL with an authority (scheme://…), up to whitespace or a quote.
const URL_LIKE = /\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s"'`<>]+/g;

/**
 * `text` with the credentials of every URL in it removed (`postgres://u:***@h/db`,
 * `?password=***`), using core's `redactUrl`. Applied to everything the command prints
 * about a store, errors included, so a password never reaches a terminal or a log.
 */
export function redactText(text: string): string {
  return text.replace(URL_LIKE, (match) => {
    // Punctuation that ends a sentence is not part of the URL ("… store x://h/db: reason").
    // Unless a secret parameter ends the URL: then the punctuation may be part of it.
    const url = match.replace(/[:,.;)\]]+$/, '');
    const redacted = redactUrl(url);
    return redacted.endsWith('=***') ? redactUrl(match) : redacted + match.slice(url.length);
  });
}
