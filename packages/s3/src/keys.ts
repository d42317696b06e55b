// The object layout under the store's prefix (see README "Layout"). Ids are validated
// before any key is made ([A-Za-z0-9._-], not starting with "."), so they are safe as
// key segments.

/** Digits of zero-padded sequence numbers: keys sort in numeric order. */
const WIDTH = 12;

const pad = (n: number) => String(n).padStart(WIDTH, '0');

/** The store's descriptor (format, index shard count). */
export const META_KEY = 'sessionkit.json';
/** The object the open-time check writes to prove conditional writes are honoured. */
export const PROBE_KEY = 'sessionkit-probe';
/** The router: every binding and follow target, replaced by compare-and-swap. */
export const ROUTER_KEY = 'router.json';
/** Where the per-session objects live. */
export const SESSIONS_PREFIX = 's/';
/** Write-intent markers: sessions whose index entry may lag their data. */
export const PENDING_PREFIX = 'pending/';

/** The session's head: its generation and the newest state known (a hint readers heal). */
export const headKey = (id: string) => `s/${id}/head`;
/** Everything of one generation of a session (deleted together). */
export const generationPrefix = (id: string, gen: string) => `s/${id}/g/${gen}/`;
/** Version `n` of a generation: created once, with `If-None-Match: *`. */
export const versionKey = (id: string, gen: string, n: number) =>
  `${generationPrefix(id, gen)}v/${pad(n)}`;
/** The search text of the messages version `n` added (or of its whole history). */
export const textKey = (id: string, gen: string, n: number) =>
  `${generationPrefix(id, gen)}t/${pad(n)}`;
/** A folded snapshot: every message up to version `n`. */
export const foldKey = (id: string, gen: string, n: number) =>
  `${generationPrefix(id, gen)}f/${pad(n)}`;
/** The search text of a folded snapshot. */
export const foldTextKey = (id: string, gen: string, n: number) =>
  `${generationPrefix(id, gen)}ft/${pad(n)}`;
/**
 * A fold's witness (a few bytes): written after the head named version `n`, so its time (the
 * server's) proves that no writer still starts from a version before `n` once the grace
 * has passed. What allows version objects to be removed.
 */
export const witnessKey = (id: string, gen: string, n: number) =>
  `${generationPrefix(id, gen)}w/${pad(n)}`;
/** The runtime status of a generation. */
export const statusKey = (id: string, gen: string) => `${generationPrefix(id, gen)}status`;
/** The event-log folder of a generation and one event in it. */
export const eventsPrefix = (id: string, gen: string) => `${generationPrefix(id, gen)}e/`;
export const eventKey = (id: string, gen: string, seq: number) =>
  `${eventsPrefix(id, gen)}${pad(seq)}`;
/** The hint of the newest event sequence (readers probe past it). */
export const eventHintKey = (id: string, gen: string) => `${generationPrefix(id, gen)}eh`;
/** An index shard. */
export const shardKey = (shard: number) => `index/${String(shard).padStart(3, '0')}.json`;
/** A write-intent marker of one writer on one session. */
export const pendingKey = (id: string, token: string) => `${PENDING_PREFIX}${id}/${token}`;

/** The sequence number at the end of a version, text or event key. */
export function sequenceOf(key: string): number {
  return Number(key.slice(key.lastIndexOf('/') + 1));
}

/** The session id of a key under `s/` or `pending/`, or undefined. */
export function idOfKey(key: string, prefix: string): string | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf('/');
  return slash <= 0 ? undefined : rest.slice(0, slash);
}

/** The shard of an id (FNV-1a over its characters). */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shards;
}
