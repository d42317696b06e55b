// Every URL the viewer links to, built in one place so pages, tests and the script agree.
// Paths carry only ids (`[A-Za-z0-9._-]`) and numbers; query values are URL-encoded.

/** How many messages a session page shows at once (the window `{last: n}`). */
export const MESSAGE_PAGE = 100;

function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== '') query.set(k, String(v));
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** The list page with these filters (`q`, `folder`, `status`, `parent`, `archived`, cursors). */
export function listHref(params: Record<string, string | number | undefined> = {}): string {
  return withQuery('/', params);
}

/** A session's permalink: its latest messages. */
export function sessionHref(id: string): string {
  return `/s/${encodeURIComponent(id)}`;
}

/** A window of a session's messages: positions `offset … offset + limit − 1`. */
export function windowHref(id: string, offset: number, limit: number): string {
  return withQuery(sessionHref(id), { offset, limit });
}

/** A permalink to message `index` (0-based): the window around it, scrolled to it. */
export function messageHref(id: string, index: number): string {
  const offset = Math.max(0, index - MESSAGE_PAGE / 2);
  return `${windowHref(id, offset, MESSAGE_PAGE)}#m${index}`;
}

/** The branch tree holding a session. */
export function treeHref(id: string): string {
  return `${sessionHref(id)}/tree`;
}

/** A session's events after `afterSequence`. */
export function eventsHref(id: string, afterSequence = 0): string {
  return withQuery(`${sessionHref(id)}/events`, { after: afterSequence || undefined });
}

/** One message as stored, as JSON. */
export function rawMessageHref(id: string, index: number): string {
  return `${sessionHref(id)}/messages/${index}`;
}

/** The bytes of image `image` of message `index`. */
export function imageHref(id: string, index: number, image: number): string {
  return `${rawMessageHref(id, index)}/images/${image}`;
}

/** `href` with `part=` set: the route answers with an HTML fragment for the page script. */
export function partHref(href: string, part: string): string {
  const [path, hash] = href.split('#');
  return `${path}${path?.includes('?') ? '&' : '?'}part=${part}${hash ? `#${hash}` : ''}`;
}
