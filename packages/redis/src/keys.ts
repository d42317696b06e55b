// The key layout. Every key of one session carries the hash tag `{<id>}`, so all of them
// live in one Cluster slot and one Lua script can update them together. Cross-session
// state lives under two fixed tags, `{~ix}` (listing order, children, pending creates) and
// `{~rt}` (the router): `~` is not an id character, so these tags never equal a session's.
import { errors } from './errors.js';

/** The default key prefix. */
export const DEFAULT_PREFIX = 'sk:';

/** Longest accepted key prefix. */
export const MAX_PREFIX_LENGTH = 256;

/**
 * Checks a key prefix: a string of at most 256 characters without `{`, `}` (they would
 * change the hash tag and break Cluster slots), glob characters (`*?[]\`, so `repair()`'s
 * SCAN pattern matches exactly this store's keys), whitespace or control characters.
 * Throws `invalid_argument`.
 */
export function assertPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || prefix.length > MAX_PREFIX_LENGTH) {
    throw errors.invalid(`prefix must be a string of at most ${MAX_PREFIX_LENGTH} characters`);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point.
  if (/[{}*?[\]\\\s\u0000-\u001f\u007f]/.test(prefix)) {
    throw errors.invalid(
      `prefix ${JSON.stringify(prefix)} may not contain braces, glob characters, whitespace or control characters`,
    );
  }
}

/** The keys of one session, all in the slot of `{id}`. */
export interface SessionKeys {
  /** Hash: `h` header JSON, `r` revision (for events), `w` write version, `g` life token (unique per create), `n` message count, `l` lineage JSON, `p` parent id, `e` last event sequence, `x` search format (`2`: `text` is per message). */
  meta: string;
  /** List: one JSON text per message, in order. */
  messages: string;
  /**
   * List: the lower-cased search text of each message (`searchTextsOf`), one entry per
   * message, so a truncation drops entries without reading the kept ones.
   */
  text: string;
  /** String: the runtime status JSON. */
  status: string;
  /** List: the event log, entry `i` holds sequence `i + 1`. */
  events: string;
  /**
   * Hash: the write ledger, token → outcome of the session's recent writes (`write-ledger.ts`).
   * It outlives a delete (it expires on its own), so a repeated write finds what it did.
   */
  ledger: string;
  /** Hash: the previous ledger generation (the ledger is renamed here when it is full). */
  ledgerPrevious: string;
  /** Hash: operation id → result (`revision count updatedAt`) of the commits that named one. */
  operations: string;
  /** List: the recorded operation ids, oldest first (the oldest is forgotten past 1,000). */
  operationOrder: string;
  /**
   * String: the search text as the previous release stored it (one string, no parts).
   * Read by nothing; the upgrade and `repair()` rebuild the list and remove it.
   */
  legacyText: string;
}

/** The header fields `list` filters on exactly (each has a sorted-set index). */
export interface FilterValues {
  folder: string;
  status: string;
  parentId?: string | undefined;
}

/** Names every key of a store under one prefix. */
export class KeySpace {
  readonly prefix: string;

  constructor(prefix: string) {
    assertPrefix(prefix);
    this.prefix = prefix;
  }

  /** The keys of session `id` (an id already checked by `assertId`). */
  session(id: string): SessionKeys {
    const base = `${this.prefix}{${id}}:`;
    return {
      meta: `${base}m`,
      messages: `${base}l`,
      text: `${base}x`,
      status: `${base}s`,
      events: `${base}e`,
      ledger: `${base}o`,
      ledgerPrevious: `${base}o0`,
      operations: `${base}op`,
      operationOrder: `${base}oq`,
      legacyText: `${base}t`,
    };
  }

  /** The ten session keys as an array, in the order the scripts expect. */
  sessionKeyList(id: string): string[] {
    const k = this.session(id);
    return [
      k.meta,
      k.messages,
      k.text,
      k.status,
      k.events,
      k.ledger,
      k.ledgerPrevious,
      k.operations,
      k.operationOrder,
      k.legacyText,
    ];
  }

  /** Sorted set: score = `updatedAt` in ms, member = id. Redis orders equal scores by member bytes, which is `list`'s id order. */
  get order(): string {
    return `${this.prefix}{~ix}:order`;
  }

  /**
   * Sorted sets of the sessions with one `folder`, `status` or `parentId` value, scored and
   * ordered like `order`. All in the `{~ix}` slot with `order`, so one script keeps them in
   * step with it (and, on standalone Redis, with the session's own write).
   */
  folderIndex(folder: string): string {
    return `${this.prefix}{~ix}:f:${folder}`;
  }
  statusIndex(status: string): string {
    return `${this.prefix}{~ix}:s:${status}`;
  }
  parentIndex(parentId: string): string {
    return `${this.prefix}{~ix}:pa:${parentId}`;
  }

  /** The filter indexes a session with these values belongs to (no parent: two). */
  filterIndexesOf(header: FilterValues): string[] {
    const out = [this.folderIndex(header.folder), this.statusIndex(header.status)];
    if (header.parentId !== undefined) out.push(this.parentIndex(header.parentId));
    return out;
  }

  /** SCAN patterns of every filter index (for `repair()` and the upgrade). */
  get filterIndexPatterns(): string[] {
    return ['f', 's', 'pa'].map((kind) => `${this.prefix}{~ix}:${kind}:*`);
  }

  /** Sorted set: ids registered by a create that has not finished, score = when (ms). */
  get pending(): string {
    return `${this.prefix}{~ix}:new`;
  }

  /** Set: ids that name `parentId` as their parent (candidates, checked against each child's own `p`). */
  children(parentId: string): string {
    return `${this.prefix}{~ix}:k:${parentId}`;
  }

  /**
   * String: the store's data format: `"3"` once every session is in its filter indexes,
   * `"2"` (the previous release) once every session keeps its search text per
   * message (set by the first store of this release that opens it, after the upgrade).
   */
  get format(): string {
    return `${this.prefix}{~ix}:format`;
  }

  /** SCAN pattern of every session's meta hash (for `repair()`). */
  get metaPattern(): string {
    return `${this.prefix}{*}:m`;
  }

  /** SCAN pattern of every children set. */
  get childrenPattern(): string {
    return `${this.prefix}{~ix}:k:*`;
  }

  /** The session id of a meta key found by SCAN, or `undefined` for any other key. */
  idOfMetaKey(key: string): string | undefined {
    if (!key.startsWith(`${this.prefix}{`) || !key.endsWith('}:m')) return undefined;
    const id = key.slice(this.prefix.length + 1, -3);
    return id.startsWith('~') ? undefined : id;
  }

  /** Router: hash tuple key → bound session id. */
  get bindings(): string {
    return `${this.prefix}{~rt}:b`;
  }
  /** Router: sorted set tuple key → binding time (ms). */
  get recent(): string {
    return `${this.prefix}{~rt}:r`;
  }
  /** Router: hash follow key → target. */
  get follows(): string {
    return `${this.prefix}{~rt}:f`;
  }
  /** Router: the last binding time handed out (strictly increasing). */
  get routerClock(): string {
    return `${this.prefix}{~rt}:clock`;
  }
  /** Router: set of tuple keys bound to `sessionId`. */
  boundTo(sessionId: string): string {
    return `${this.prefix}{~rt}:bs:${sessionId}`;
  }
  /** Router: set of follow keys pinned to `sessionId`. */
  pinnedTo(sessionId: string): string {
    return `${this.prefix}{~rt}:fs:${sessionId}`;
  }
}
