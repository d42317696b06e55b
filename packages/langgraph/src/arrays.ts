// Array channels (a graph's `messages`) stored as what changed: when a put's value begins
// with the items of the value its parent had, the record keeps only the new items and a
// pointer to that value. A put then writes O(new items) instead of the whole list, and a
// thread's bytes grow with its messages, not with messages × steps. What the last value of
// each array channel looked like is kept per thread in memory (the items' JSON text), from
// the saver's own puts and reads; without it a put stores the whole value again.
import type { Blob, Delta, Stored } from './records.js';
import type { ThreadView } from './view.js';

/** A value known to be stored at a position: its items' JSON text and its chain's start. */
interface Known {
  key: string;
  texts: string[];
  start: number;
}

/** The last array values the saver stored or read, per thread session and channel. */
export class ArrayValues {
  readonly #known = new Map<string, Known>();
  readonly #max: number;

  constructor(maxEntries: number) {
    this.#max = maxEntries;
  }

  /**
   * What to store for `channel`'s new value `stored` at position `p` whose previous value
   * is at `base` (the parent's): a delta when `stored` is a JSON array that keeps at least
   * half of the known previous value's items, else `stored` itself. `remember` records
   * the result once the write has landed.
   */
  encode(
    view: ThreadView,
    channel: string,
    stored: Stored,
    p: number,
    base: number | undefined,
  ): { blob: Blob; remember: () => void } {
    const items = 'j' in stored && Array.isArray(stored.j) ? (stored.j as unknown[]) : undefined;
    if (items === undefined) return { blob: stored, remember: () => {} };
    const here = slot(view, channel, p);
    const known = base === undefined ? undefined : this.#known.get(slot(view, channel, base));
    if (known !== undefined && base !== undefined) {
      let n = 0;
      const texts: string[] = [];
      while (n < known.texts.length && n < items.length) {
        const text = JSON.stringify(items[n]);
        if (text !== known.texts[n]) break;
        texts.push(text);
        n++;
      }
      if (n > 0 && n * 2 >= known.texts.length) {
        const add = items.slice(n);
        const blob: Delta = { d: { base, n, s: known.start, add } };
        return {
          blob,
          remember: () =>
            this.#set(here, [...texts, ...add.map((i) => JSON.stringify(i))], known.start),
        };
      }
    }
    return {
      blob: stored,
      remember: () =>
        this.#set(
          here,
          items.map((i) => JSON.stringify(i)),
          p,
        ),
    };
  }

  /**
   * The stored form of `channel`'s value held at position `p`: a delta chain is rebuilt
   * into the full array (its records read in a few windows from the chain's start).
   */
  async decode(view: ThreadView, channel: string, p: number): Promise<Stored | undefined> {
    const holder = await view.get(p);
    const blob = holder.k === 'c' ? holder.b[channel] : undefined;
    if (blob === undefined) return undefined;
    if (!('d' in blob)) {
      if ('j' in blob && Array.isArray(blob.j))
        this.#set(
          slot(view, channel, p),
          (blob.j as unknown[]).map((i) => JSON.stringify(i)),
          p,
        );
      return blob;
    }
    await view.prefetchRange(blob.d.s, p + 1);
    const chain: Delta['d'][] = [];
    let at = p;
    let full: unknown[] | undefined;
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
    this.#set(
      slot(view, channel, p),
      items.map((i) => JSON.stringify(i)),
      blob.d.s,
    );
    return { j: items };
  }

  #set(key: string, texts: string[], start: number): void {
    this.#known.delete(key);
    // One value per thread and channel: a newer one replaces the older.
    const prefix = key.slice(0, key.lastIndexOf('\u0000'));
    for (const k of this.#known.keys()) if (k.startsWith(`${prefix}\u0000`)) this.#known.delete(k);
    this.#known.set(key, { key, texts, start });
    while (this.#known.size > this.#max) this.#known.delete(this.#known.keys().next().value!);
  }
}

function slot(view: ThreadView, channel: string, p: number): string {
  return `${view.sessionId}\u0000${channel}\u0000${view.head.g}\u0000${p}`;
}
