// A session page needs the session's header (title, counters, metadata …) without its
// transcript, and the store contract reads a header by id only through `load`, which reads
// every message. But a summary's keyset position (`updatedAt`, `id`) finds it with one
// `list` call of one row. So the viewer remembers the position of every summary it has
// listed, and finds headers from there (a session written to since has moved up the order,
// among the sessions updated after its old position); only a session it has never listed
// (a permalink opened first thing) is read once with `load`.
import { MAX_ID_LENGTH, type SessionSummary, type Store } from '@sessionkit/core';

/** Sessions written after a remembered position that are searched for a moved session. */
export const MOVED_WINDOW = 200;

/** How many sessions' positions are remembered (least recently used are forgotten). */
export const REMEMBERED_POSITIONS = 10_000;

/**
 * The smallest cursor id above `id` in byte order that no other session id falls between:
 * ids use only `[A-Za-z0-9._-]` (all above U+0001), so `id + "\u0001"` does, and an id of
 * the maximum length has no longer neighbours, so its last character raised by one does.
 */
export function cursorJustAbove(id: string): string {
  if (id.length < MAX_ID_LENGTH) return `${id}\u0001`;
  return id.slice(0, -1) + String.fromCharCode(id.charCodeAt(id.length - 1) + 1);
}

/** The summary of a loaded session (what `list` would return for it). */
function summaryOfLoaded(session: Awaited<ReturnType<Store<unknown>['load']>>): SessionSummary {
  const { messages, ...rest } = session;
  return { ...rest, messageCount: messages.length };
}

/** Finds session summaries by id for one store, from the positions listings revealed. */
export class SummaryFinder {
  readonly #positions = new Map<string, number>();

  /** Remembers where these summaries sit in the listing order (call with every page). */
  remember(summaries: Iterable<SessionSummary>): void {
    for (const s of summaries) {
      this.#positions.delete(s.id);
      this.#positions.set(s.id, s.updatedAt.getTime());
    }
    for (const oldest of this.#positions.keys()) {
      if (this.#positions.size <= REMEMBERED_POSITIONS) break;
      this.#positions.delete(oldest);
    }
  }

  /**
   * The summary of `id`: one `list` call of one row at its remembered position; when the
   * session was written to since (it moved up the order), one `list` of the sessions
   * updated after that position (`MOVED_WINDOW`, oldest first); when it was never listed,
   * or more sessions than that moved past it, one `load`. Throws what the store throws
   * (`not_found` for a missing session).
   */
  async find(store: Store<unknown>, id: string): Promise<SessionSummary> {
    const at = this.#positions.get(id);
    if (at !== undefined) {
      const [row] = await store.list({
        includeArchived: true,
        startAfter: { updatedAt: new Date(at), id: cursorJustAbove(id) },
        limit: 1,
      });
      const moved =
        row?.id === id
          ? [row]
          : await store.list({
              includeArchived: true,
              after: new Date(at),
              oldestFirst: true,
              limit: MOVED_WINDOW,
            });
      const found = moved.find((s) => s.id === id);
      if (found) {
        this.remember([found]);
        return found;
      }
    }
    const summary = summaryOfLoaded(await store.load(id));
    this.remember([summary]);
    return summary;
  }
}
