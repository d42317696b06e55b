// Array channels (a graph's `messages`) stored as what changed: when a put's value begins
// with the items of the value its parent had, the record keeps only the new items and a
// pointer to that value, so a put serializes and writes O(new items) and a thread's bytes
// grow with its messages, not with messages × steps. The saver remembers, per thread and
// channel, the last array value it stored or returned (the item objects themselves): a
// value that begins with the same objects (same identity and same `id`) shares their
// stored form, and a read of a value it remembers returns those objects without reading
// or deserializing the records again. Without it (a new process, another writer) a put
// stores the value whole.
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { type Blob, type Delta, type Stored, storeValue } from './records.js';
import type { ThreadView } from './view.js';

/** A value known to be stored at a position: its items and its chain's start. */
interface Known {
  items: unknown[];
  ids: unknown[];
  start: number;
}

/** An encoded channel value and what to remember once its write has landed. */
export interface Encoded {
  blob: Blob;
  remember: () => void;
}

/** The last array values the saver stored or returned, per thread session and channel. */
export class ArrayValues {
  readonly #known = new Map<string, Known>();
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
          const blob: Delta = { d: { base, n, s: known.start, add: tail.j as unknown[] } };
          return { blob, remember: () => this.#set(here, value, known.start) };
        }
      }
    }
    const blob = await whole();
    const remember =
      'j' in blob && Array.isArray(blob.j) ? () => this.#set(here, value, p) : () => {};
    return { blob, remember };
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
    await view.prefetchRange(blob.d.s, p + 1);
    const chain: Delta['d'][] = [];
    let at = p;
    let full: unknown[];
    for (;;) {
      const r = await view.get(at);
      const b = r.k === 'c' ? r.b[channel] : undefined;
      if (b === undefined) throw new Error(`[sessionkit/langgraph] broken value chain at ${at}`);
      if ('d' in b) {
        chain.push(b.d);
        at = b.d.base;
        continue;
      }
      full = 'j' in b && Array.isArray(b.j) ? (b.j as unknown[]) : [];
      break;
    }
    let items = full;
    for (let i = chain.length - 1; i >= 0; i--)
      items = [...items.slice(0, chain[i]!.n), ...chain[i]!.add];
    return { stored: { j: items }, start: blob.d.s };
  }

  #set(key: string, value: unknown[], start: number): void {
    // One value per thread and channel: a newer one replaces the older.
    const prefix = key.slice(0, key.lastIndexOf('\u0000') + 1);
    for (const k of this.#known.keys()) if (k.startsWith(prefix)) this.#known.delete(k);
    this.#known.set(key, { items: value.slice(), ids: value.map(idOf), start });
    while (this.#known.size > this.#max) this.#known.delete(this.#known.keys().next().value!);
  }
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
