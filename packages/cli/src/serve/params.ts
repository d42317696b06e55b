// Reading a request's path and query: a bad value is a 400 that says what was expected,
// before any store call.
import { isValidId, type ListOptions, type MessageWindowQuery } from '@sessionkit/core';
import { type Cursor, parseCursor } from '../commands/parsers.js';
import { MESSAGE_PAGE } from './links.js';
import { HttpError } from './reply.js';

/** Largest window a session page shows at once. */
export const MAX_WINDOW = 1000;
/** Default and largest page of the session list. */
export const LIST_PAGE = 50;
export const MAX_LIST_PAGE = 200;

/** A session id from a path segment; anything that is not an id is a 404. */
export function sessionIdParam(raw: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new HttpError(404, 'no such page');
  }
  if (!isValidId(id)) throw new HttpError(404, `"${id}" is not a session id`);
  return id;
}

/** A non-negative integer query parameter in `[0, max]`, or undefined when absent. */
export function intParam(url: URL, name: string, max: number): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n > max) {
    throw new HttpError(400, `${name} must be an integer from 0 to ${max}, got "${raw}"`);
  }
  return n;
}

/** A path segment holding a non-negative integer (a message position, an image number). */
export function indexSegment(raw: string, what: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) {
    throw new HttpError(404, `${what} must be a number`);
  }
  return n;
}

/** A keyset cursor (`<updatedAt ISO>/<id>`, as `sessionkit list` prints it). */
function cursorParam(url: URL, name: string): Cursor | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return undefined;
  try {
    return parseCursor(raw);
  } catch (e) {
    throw new HttpError(400, `${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The list page's request: filters for `list`, page size and direction. */
export interface ListRequest {
  filters: Pick<ListOptions, 'query' | 'folder' | 'status' | 'parentId' | 'includeArchived'>;
  limit: number;
  /** Older sessions than this cursor (the next page). */
  after: Cursor | undefined;
  /** Newer sessions than this cursor (the previous page). */
  before: Cursor | undefined;
}

function textParam(url: URL, name: string): string | undefined {
  const value = url.searchParams.get(name)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Reads `q`, `folder`, `status`, `parent`, `archived`, `limit`, `after`, `before`. */
export function listRequest(url: URL): ListRequest {
  const filters: ListRequest['filters'] = {};
  const query = textParam(url, 'q');
  if (query !== undefined) filters.query = query;
  const folder = textParam(url, 'folder');
  if (folder !== undefined) filters.folder = folder;
  const status = textParam(url, 'status');
  if (status !== undefined) filters.status = status;
  const parent = textParam(url, 'parent');
  if (parent !== undefined) {
    if (!isValidId(parent)) throw new HttpError(400, `parent: "${parent}" is not a session id`);
    filters.parentId = parent;
  }
  if (url.searchParams.get('archived') === '1') filters.includeArchived = true;
  const after = cursorParam(url, 'after');
  const before = cursorParam(url, 'before');
  if (after && before) throw new HttpError(400, 'give after or before, not both');
  const limit = intParam(url, 'limit', MAX_LIST_PAGE) || LIST_PAGE;
  return { filters, limit, after, before };
}

/** The window of messages a session page shows: `offset`/`limit`, else the last page. */
export function windowRequest(url: URL): MessageWindowQuery {
  const offset = intParam(url, 'offset', Number.MAX_SAFE_INTEGER);
  const limit = intParam(url, 'limit', MAX_WINDOW);
  if (offset === undefined && limit === undefined) return { last: MESSAGE_PAGE };
  return { offset: offset ?? 0, limit: limit || MESSAGE_PAGE };
}
