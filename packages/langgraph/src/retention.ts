// Retention inside a thread: keep the newest checkpoints of a namespace and drop the rest,
// by rewriting that session's records under the next generation (one conditional commit
// that replaces the history). Kept checkpoints keep their values, metadata and writes; a
// kept checkpoint whose parent was dropped loses its parent link.
import type { CheckpointRecord, Head, Ref, Stored, ThreadRecord, WritesRecord } from './records.js';
import { headAfterPut } from './records.js';
import type { ThreadView } from './view.js';

/** Reads the stored form of `channel`'s value at a position (delta chains rebuilt). */
export type DecodeValue = (
  view: ThreadView,
  channel: string,
  p: number,
) => Promise<Stored | undefined>;

/**
 * The records of `view`'s session keeping only its newest `keep` checkpoints, or undefined
 * when there is nothing to drop. Array values are stored whole in the first kept
 * checkpoint and as changes after it.
 */
export async function keptRecords(
  view: ThreadView,
  keep: number,
  decode: DecodeValue,
): Promise<ThreadRecord[] | undefined> {
  const newest: CheckpointRecord[] = [];
  let total = 0;
  for await (const record of view.descending()) {
    total += 1;
    if (newest.length < keep) newest.push(record);
  }
  if (total <= keep) return undefined;
  const kept = newest.reverse();
  const keptIds = new Set(kept.map((r) => r.id));
  const g = view.head.g + 1;
  let head: Head = { g, cp: null, at: -1, sorted: true, lr: {}, w: [], late: {}, heads: {} };
  const out: ThreadRecord[] = [];
  const previous = new Map<string, { items: unknown[]; p: number; s: number }>();
  for (const old of kept) {
    const p = out.length;
    const b: CheckpointRecord['b'] = {};
    const r: Record<string, Ref> = {};
    const heads = { ...head.heads };
    for (const [channel, [version, at]] of Object.entries(old.r)) {
      const stored = await decode(view, channel, at);
      if (stored === undefined) continue;
      r[channel] = [version, p];
      heads[channel] = [version, p];
      b[channel] = asChange(previous, channel, stored, p);
    }
    // Its writes follow it in the new history: no `pre`.
    head = headAfterPut(head, old.id, p, r, heads).head;
    const parent = old.parent !== undefined && keptIds.has(old.parent) ? old.parent : undefined;
    const { parent: _dropped, pre: _before, ...rest } = old;
    out.push({
      ...rest,
      lg: 3,
      ...(parent === undefined ? {} : { parent }),
      g,
      p,
      key: head.cp ?? '',
      h: head,
      b,
      r,
    });
    for (const w of await writesRecordsOf(view, old)) {
      const q = out.length;
      head = { ...head, w: [...head.w, q] };
      out.push({ ...w, lg: 3, g, p: q, key: head.cp ?? '', h: head });
    }
  }
  return out;
}

/** A full array value as a change to the previous kept value of the channel, when it extends it. */
function asChange(
  previous: Map<string, { items: unknown[]; p: number; s: number }>,
  channel: string,
  stored: Stored,
  p: number,
): CheckpointRecord['b'][string] {
  if (!('j' in stored) || !Array.isArray(stored.j)) return stored;
  const items = stored.j as unknown[];
  const before = previous.get(channel);
  let n = 0;
  if (before !== undefined)
    while (
      n < before.items.length &&
      n < items.length &&
      JSON.stringify(items[n]) === JSON.stringify(before.items[n])
    )
      n++;
  if (before !== undefined && n > 0 && n * 2 >= before.items.length) {
    previous.set(channel, { items, p, s: before.s });
    return { d: { base: before.p, n, s: before.s, add: items.slice(n) } };
  }
  previous.set(channel, { items, p, s: p });
  return stored;
}

/** The writes records of checkpoint `record` (the view's own dedup happens on read). */
async function writesRecordsOf(
  view: ThreadView,
  record: CheckpointRecord,
): Promise<WritesRecord[]> {
  const out: WritesRecord[] = [];
  for (const p of await view.writePositions(record)) {
    const r = await view.get(p);
    if (r.k === 'w' && r.to === record.id) out.push(r);
  }
  return out;
}
