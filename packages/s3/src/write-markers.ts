// A store's write markers on the sessions it writes. A marker (`pending/<id>/<token>`) says
// that the session's index entry may lag its versions: readers list the markers and bring
// the entries of marked sessions up to date from the versions first, and remove a marker
// older than STALE_MARKER_MS once they have. So a marker must exist from before a version
// lands until its index entry is written. One marker per commit cost a sequential round
// trip per commit; instead one marker covers a store's writes of a session while they keep
// coming, a younger one replaces it as it ages, and it goes once the store's writes of the
// session are indexed and none came for a while.
import { type SessionIndex, STALE_MARKER_MS } from './session-index.js';

/** A marker this old is replaced: the next write sends a new one beside its version. */
export const MARKER_REFRESH_MS = 10_000;
/** No version PUT starts under a marker this old: the write waits for a new one. */
export const MARKER_USE_MS = 20_000;
/**
 * A version PUT under a marker is abandoned once the marker is this old, so it lands while
 * readers keep the marker (they remove it only once older than STALE_MARKER_MS, and only
 * after bringing the entry up to date); 20 s are left for clocks that differ.
 */
export const MARKER_LAND_BY_MS = STALE_MARKER_MS - 20_000;

/** One marker of this store: its token once written, and when its PUT was sent. */
interface Marker {
  token: Promise<string>;
  since: number;
}

/** A version as the index orders them: a generation, a number in it. */
export interface VersionId {
  gen: string;
  n: number;
}

/** This store's markers and writes of one session. */
interface SessionMarks {
  /** Oldest first; the newest written one covers every write of the session. */
  markers: Marker[];
  /** Writes begun and not ended. */
  writing: number;
  /** Index updates of landed versions not resolved yet. */
  indexing: number;
  /** The newest version this store landed, and the newest it saw indexed. */
  landed: VersionId | undefined;
  indexed: VersionId | undefined;
  /** A write failed after its version PUT was sent: the version may have landed. */
  unsure: boolean;
  idle: ReturnType<typeof setTimeout> | undefined;
}

/** What a write runs under: its marker (written once `ready`), and when it must land by. */
export interface MarkerCover {
  ready: Promise<unknown>;
  /** The `performance.now()` by which the version PUT must have landed, or be abandoned. */
  landBy: number;
}

/**
 * How a write ended: its version landed (and its index entry is being written), nothing
 * was written, or the version PUT may have landed (it, or a step after it, failed).
 */
export type WriteEnd = { landed: VersionId; indexing: Promise<boolean> } | 'none' | 'unsure';

const laterOf = (a: VersionId | undefined, b: VersionId): VersionId =>
  a === undefined || b.gen > a.gen || (b.gen === a.gen && b.n > a.n) ? b : a;

/** Whether the index holds what this store landed (or more). */
function caughtUp(s: SessionMarks): boolean {
  const { landed, indexed } = s;
  if (landed === undefined) return true;
  return indexed !== undefined && indexed.gen === landed.gen && indexed.n >= landed.n;
}

/** The write markers of one store (see the top of this file). */
export class WriteMarkers {
  readonly #sessions = new Map<string, SessionMarks>();
  #closed = false;

  constructor(private readonly index: SessionIndex) {}

  /** Begins a write of `id`: the marker it runs under. Call `end` however it ends. */
  begin(id: string): MarkerCover {
    let s = this.#sessions.get(id);
    if (s === undefined) {
      s = {
        markers: [],
        writing: 0,
        indexing: 0,
        landed: undefined,
        indexed: undefined,
        unsure: false,
        idle: undefined,
      };
      this.#sessions.set(id, s);
    }
    s.writing++;
    clearTimeout(s.idle);
    s.idle = undefined;
    return this.cover(id);
  }

  /**
   * The marker a begun write of `id` runs under now: the newest while it is young enough
   * (a new one is sent beside the write once it ages), else a new one to wait for.
   */
  cover(id: string): MarkerCover {
    const s = this.#sessions.get(id);
    if (s === undefined) throw new Error(`cover(${id}) outside a write`);
    let use = s.markers.at(-1);
    const age = use === undefined ? Number.POSITIVE_INFINITY : performance.now() - use.since;
    if (use === undefined || age >= MARKER_USE_MS) use = this.#add(id, s);
    else if (age >= MARKER_REFRESH_MS) this.#add(id, s);
    return { ready: use.token, landBy: use.since + MARKER_LAND_BY_MS };
  }

  /** Ends a write of `id` begun with `begin`. */
  end(id: string, how: WriteEnd): void {
    const s = this.#sessions.get(id);
    if (s === undefined) return;
    s.writing--;
    if (how === 'unsure') s.unsure = true;
    else if (how !== 'none') {
      // Later than whatever an unsure write may have landed: indexing it covers both.
      s.unsure = false;
      const landed = how.landed;
      s.landed = laterOf(s.landed, landed);
      s.indexing++;
      void how.indexing.then((ok) => {
        s.indexing--;
        if (ok) s.indexed = laterOf(s.indexed, landed);
        this.#whenIdle(id, s);
      });
    }
    this.#whenIdle(id, s);
  }

  /**
   * Retires every session's markers now (after the store's index updates ended): removed
   * where the index holds what the store wrote, left for readers elsewhere.
   */
  close(): void {
    this.#closed = true;
    for (const [id, s] of this.#sessions) this.#retire(id, s, true);
  }

  #add(id: string, s: SessionMarks): Marker {
    const marker: Marker = { since: performance.now(), token: this.index.mark(id) };
    s.markers.push(marker);
    marker.token.then(
      () => {
        // Written: it covers every write of the session, so the older ones may go.
        const i = s.markers.indexOf(marker);
        for (const old of s.markers.splice(0, Math.max(0, i))) {
          this.index.unmarkLater(id, old.token);
        }
      },
      () => {
        const i = s.markers.indexOf(marker);
        if (i >= 0) s.markers.splice(i, 1);
      },
    );
    return marker;
  }

  /** Once nothing is in flight: the markers go when the newest is due for replacing. */
  #whenIdle(id: string, s: SessionMarks): void {
    if (s.writing > 0 || s.indexing > 0 || this.#closed) return;
    clearTimeout(s.idle);
    const newest = s.markers.at(-1);
    const wait = newest === undefined ? 0 : newest.since + MARKER_REFRESH_MS - performance.now();
    s.idle = setTimeout(() => this.#retire(id, s, false), Math.max(0, wait));
    s.idle.unref?.();
  }

  #retire(id: string, s: SessionMarks, closing: boolean): void {
    clearTimeout(s.idle);
    s.idle = undefined;
    if (!closing && (s.writing > 0 || s.indexing > 0)) return;
    this.#sessions.delete(id);
    // Left up when the index may lag: readers bring the entry up to date, then remove it.
    if (s.unsure || s.writing > 0 || s.indexing > 0 || !caughtUp(s)) return;
    for (const m of s.markers) this.index.unmarkLater(id, m.token);
  }
}
