// Array channels (a graph's `messages`) stored as what changed: when a put's value begins
// with the items of the value its parent had, the record keeps only the new items and a
// pointer to that value, so a put serializes and writes O(new items) and a thread's bytes
// grow with its messages, not with messages × steps. The saver remembers, per thread and
// channel, the last array value it stored or returned (the item objects themselves): a
// value that begins with the same objects (same identity and same `id`) shares their
// stored form, and a read of a value it remembers returns those objects without reading
// or deserializing the records again. Without it (a new process, another writer) a put
// stores the value whole.
//
// The new items of a step are usually the pending writes its tasks stored just before (a
// node's returned messages): the saver remembers the array writes it stored per
// checkpoint, and a delta whose new items equal them (the same JSON) points at those
// writes instead of holding the items again, so each message's bytes are stored once.
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { type Blob, type Delta, type Stored, storeValue, type WriteRef } from './records.js';
import type { ThreadView } from './view.js';

/** A value known to be stored at a position: its items and its chain's start. */
interface Known {
  items: unknown[];
  ids: unknown[];
  start: number;
}

/** An array write stored at `p` (index `k` of the writes record): its items' JSON. */
export interface StoredArrayWrite {
  p: number;
  k: number;
  channel: string;
  texts: string[];
}

/** An encoded channel value and what to remember once its write has landed. */
export interface Encoded {
  blob: Blob;
  remember: () => void;
}

/** The last array values the saver stored or returned, per thread session and channel. */
export class ArrayValues {
  readonly #known = new Map<string, Known>();
  /** Array writes this saver stored, by session, generation and checkpoint id. */
  readonly #writes = new Map<string, StoredArrayWrite[]>();
  readonly #max: number;
  readonly #serde: SerializerProtocol;

  constructor(serde: SerializerProtocol, maxEntries: number) {
    this.#serde = serde;
    this.#max = maxEntries;
  }

  /**
   * What to store for `channel`'s new `value` at position `p` whose previous value is at
   * `base` (the parent's): a delta when `value` is an array that begins with at least half
   * of the remembered previous value's items, else the whole value (`whole`, serialized
   * once however often the write is retried).
   */
  async encode(
    view: ThreadView,
    channel: string,
    value: unknown,
    whole: () => Promise<Stored>,
    p: number,
    base: number | undefined,
    parent?: string,
  ): Promise<Encoded> {
    const here = slot(view, channel, p);
    if (!Array.isArray(value) || this.#max === 0)
      return { blob: await whole(), remember: () => {} };
    const known = base === undefined ? undefined : this.#known.get(slot(view, channel, base));
    if (known !== undefined && base !== undefined) {
      let n = 0;
      while (
        n < known.items.length &&
        n < value.length &&
        sameItem(value[n], known.items[n], known.ids[n])
      )
        n++;
      if (n > 0 && n * 2 >= known.items.length) {
        const tail = await storeValue(this.#serde, value.slice(n));
        if ('j' in tail && Array.isArray(tail.j)) {
          const writes = parent === undefined ? [] : this.#writesTo(view, parent, channel);
          const { refs, rest } = shared(tail.j as unknown[], writes);
          const d: Delta['d'] = { base, n, s: known.start, add: rest };
          // Only the items the writes do not hold; the read puts the ids back.
          if (refs.length > 0) d.w = refs;
          const blob: Delta = { d };
          // The first n items' ids were just compared with the remembered ones: reading
          // a message's id is what costs here, once per item and put is enough.
          const ids = [...known.ids.slice(0, n), ...value.slice(n).map(idOf)];
          return { blob, remember: () => this.#set(here, value, known.start, ids) };
        }
      }
    }
    return this.#whole(view, channel, value, await whole(), p, parent);
  }

  /**
   * `value` stored whole, or (format 3) as the parent's writes that hold it and the items
   * after them: a delta with no base (`n` 0), so a graph's first input, whose start task's
   * writes are the whole `messages` value of the next checkpoint, is not stored again.
   */
  #whole(
    view: ThreadView,
    channel: string,
    value: unknown[],
    blob: Stored,
    p: number,
    parent: string | undefined,
  ): Encoded {
    const here = slot(view, channel, p);
    if (!('j' in blob) || !Array.isArray(blob.j)) return { blob, remember: () => {} };
    const writes = parent === undefined ? [] : this.#writesTo(view, parent, channel);
    const { refs, rest } = shared(blob.j as unknown[], writes);
    if (refs.length === 0) return { blob, remember: () => this.#set(here, value, p) };
    // The chain starts at the first write it points at (what a read fetches from).
    const s = Math.min(...refs.map(([q]) => q));
    const d: Delta['d'] = { base: -1, n: 0, s, w: refs, add: rest };
    return { blob: { d }, remember: () => this.#set(here, value, s) };
  }

  /** Remembers the array writes of a writes record stored at `p` to checkpoint `to`. */
  wrote(view: ThreadView, to: string, p: number, writes: [string, number, Stored][]): void {
    if (this.#max === 0) return;
    const found: StoredArrayWrite[] = [];
    writes.forEach(([channel, , value], k) => {
      if ('j' in value && Array.isArray(value.j) && value.j.length > 0)
        found.push({ p, k, channel, texts: value.j.map((item) => JSON.stringify(item)) });
    });
    if (found.length === 0) return;
    const key = `${view.sessionId}\u0000${view.head.g}\u0000${to}`;
    this.#writes.delete(key); // re-inserted last: the map is oldest first
    this.#writes.set(key, [...(this.#writes.get(key) ?? []), ...found]);
    while (this.#writes.size > this.#max) this.#writes.delete(this.#writes.keys().next().value!);
  }

  /** Forgets everything (a thread deleted or rewritten by this saver). */
  clear(): void {
    this.#known.clear();
    this.#writes.clear();
  }

  #writesTo(view: ThreadView, to: string, channel: string): StoredArrayWrite[] {
    const all = this.#writes.get(`${view.sessionId}\u0000${view.head.g}\u0000${to}`) ?? [];
    return all.filter((w) => w.channel === channel && w.p < view.count);
  }

  /**
   * The remembered value of `channel` at position `p` (a new array of the same item
   * objects), or undefined.
   */
  remembered(view: ThreadView, channel: string, p: number): unknown[] | undefined {
    const known = this.#known.get(slot(view, channel, p));
    if (known === undefined) return undefined;
    // Only while every item is as it was (the one in-place change LangGraph makes to a
    // message is giving it an id).
    for (let i = 0; i < known.items.length; i++)
      if (!sameItem(known.items[i], known.items[i], known.ids[i])) return undefined;
    return known.items.slice();
  }

  /** Remembers `value`, deserialized from the record at `p` whose chain starts at `start`. */
  read(view: ThreadView, channel: string, p: number, value: unknown, start: number): void {
    if (Array.isArray(value) && this.#max > 0) this.#set(slot(view, channel, p), value, start);
  }

  /**
   * The stored form of `channel`'s value held at position `p` and where its chain starts:
   * a delta chain is rebuilt into the full array (its records read in a few windows).
   */
  async decode(
    view: ThreadView,
    channel: string,
    p: number,
  ): Promise<{ stored: Stored; start: number } | undefined> {
    const holder = await view.get(p);
    const blob = holder.k === 'c' ? holder.b[channel] : undefined;
    if (blob === undefined) return undefined;
    if (!('d' in blob)) return { stored: blob, start: p };
    // The chain and the writes its deltas point at (stored between its records).
    await view.prefetchRange(blob.d.s, p + 1);
    // Each delta with the checkpoint it belongs to's parent: the writes it points at are
    // that checkpoint's.
    const chain: (Delta['d'] & { parent: string | undefined })[] = [];
    let at = p;
    let full: unknown[];
    for (;;) {
      const r = await view.get(at);
      const b = r.k === 'c' ? r.b[channel] : undefined;
      if (b === undefined) throw new Error(`[sessionkit/langgraph] broken value chain at ${at}`);
      if ('d' in b) {
        chain.push({ ...b.d, parent: r.k === 'c' ? r.parent : undefined });
        // No item from a base (format 3): the chain starts with this delta's writes.
        if (b.d.n === 0) {
          full = [];
          break;
        }
        at = b.d.base;
        continue;
      }
      full = 'j' in b && Array.isArray(b.j) ? (b.j as unknown[]) : [];
      break;
    }
    let items = full;
    for (let i = chain.length - 1; i >= 0; i--) {
      const d = chain[i]!;
      const written: unknown[] = [];
      for (const [q, k, ids] of d.w ?? [])
        written.push(...patched(await writtenItems(view, q, k, d.parent), ids));
      items = [...items.slice(0, d.n), ...written, ...d.add];
    }
    return { stored: { j: items }, start: blob.d.s };
  }

  #set(key: string, value: unknown[], start: number, ids = value.map(idOf)): void {
    // One value per thread and channel: a newer one replaces the older.
    const prefix = key.slice(0, key.lastIndexOf('\u0000') + 1);
    for (const k of this.#known.keys()) if (k.startsWith(prefix)) this.#known.delete(k);
    this.#known.set(key, { items: value.slice(), ids, start });
    while (this.#known.size > this.#max) this.#known.delete(this.#known.keys().next().value!);
  }
}

/** The items of the array write `k` of the writes record at `q` (a delta points at it). */
async function writtenItems(
  view: ThreadView,
  q: number,
  k: number,
  parent: string | undefined,
): Promise<unknown[]> {
  const r = await view.get(q);
  // A pointer is only ever to the parent's writes: anything else is a damaged history.
  const value = r.k === 'w' && r.to === parent ? r.w[k]?.[2] : undefined;
  if (value === undefined || !('j' in value) || !Array.isArray(value.j))
    throw new Error(`[sessionkit/langgraph] a value points at a missing write (${q}, ${k})`);
  return value.j as unknown[];
}

/**
 * `items` (the JSON of a delta's new items) as the writes that hold its first items, in
 * any order of the writes (each used once), and the items after them.
 */
function shared(
  items: unknown[],
  writes: StoredArrayWrite[],
): { refs: WriteRef[]; rest: unknown[] } {
  const refs: WriteRef[] = [];
  const unused = [...writes];
  let i = 0;
  for (;;) {
    let ref: WriteRef | undefined;
    const found = unused.findIndex((w) => {
      if (i + w.texts.length > items.length) return false;
      const ids = w.texts.map((text, j) => idPatch(items[i + j], text));
      if (ids.includes(false)) return false;
      ref = ids.some((id) => id !== null) ? [w.p, w.k, ids as (string | null)[]] : [w.p, w.k];
      return true;
    });
    if (found < 0 || ref === undefined) break;
    i += unused.splice(found, 1)[0]!.texts.length;
    refs.push(ref);
  }
  return { refs, rest: i === 0 ? items : items.slice(i) };
}

/**
 * How `item` (JSON) is the write's item `text`: `null` when it is the same JSON, the id
 * when it is that item with `kwargs.id` added (LangGraph's message reducer gives a message
 * without an id one after its write was stored), `false` otherwise.
 */
function idPatch(item: unknown, text: string): string | null | false {
  const json = JSON.stringify(item);
  if (json === text) return null;
  const kwargs = (item as { kwargs?: { id?: unknown } } | null)?.kwargs;
  if (typeof kwargs !== 'object' || kwargs === null || typeof kwargs.id !== 'string') return false;
  const { id, ...rest } = kwargs;
  return JSON.stringify({ ...(item as object), kwargs: rest }) === text ? (id as string) : false;
}

/** The write's items as the delta has them (`ids`: an id given to item i after it). */
function patched(items: unknown[], ids: (string | null)[] | undefined): unknown[] {
  if (ids === undefined) return items;
  return items.map((item, i) => {
    const id = ids[i];
    if (id === null || id === undefined) return item;
    const m = item as { kwargs: Record<string, unknown> };
    return { ...m, kwargs: { ...m.kwargs, id } };
  });
}

function idOf(item: unknown): unknown {
  return typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
}

/** The same item: a primitive equal to it, or the same object with the same `id`. */
function sameItem(item: unknown, known: unknown, knownId: unknown): boolean {
  if (item !== known) return false;
  if (typeof item !== 'object' || item === null) return true;
  const id = idOf(item);
  return id !== undefined && id !== null && id === knownId;
}

function slot(view: ThreadView, channel: string, p: number): string {
  return `${view.sessionId}\u0000${view.head.g}\u0000${channel}\u0000${p}`;
}
