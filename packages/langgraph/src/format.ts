// Format 3 (`lg: 3`): how a record is stored. A format 3 record holds format 2's fields
// less those the rest of the record tells (about half of a record's bytes besides its
// values were such copies): the `key` (the head's latest checkpoint id), the head's
// generation (the record's), a checkpoint record's own id and position and refs in its
// head when it is the latest checkpoint, its id inside the serialized checkpoint, a
// writes record's `to` when it is the head's latest checkpoint, the head's defaults
// (sorted, no writes, no late writes), the head's `heads` entries that equal its `lr`,
// the checkpoint's `channel_versions` its refs hold, and a delta's empty `add`.
// A field is left out only when reading puts back exactly what it was, so the saver works
// on whole records (`ThreadRecord`) and only `storedRecord` and `threadRecordOf` see the
// stored shape. Format 1 and 2 records are read as they are.
import {
  type Blob,
  type CheckpointRecord,
  type Head,
  isThreadRecord,
  type Ref,
  type Stored,
  type ThreadRecord,
} from './records.js';

/** A head as a format 3 record stores it (every field may be left out). */
interface StoredHead {
  g?: number;
  cp?: string | null;
  at?: number;
  sorted?: boolean;
  lr?: Record<string, Ref>;
  w?: number[];
  late?: Record<string, number[]>;
  /** The whole `heads`, when it does not hold every `lr` entry as it is. */
  heads?: Record<string, Ref>;
  /** The `heads` entries besides the `lr` ones (every `lr` entry is one of `heads`). */
  hx?: Record<string, Ref>;
}

/** What the store holds for `record`: its format 3 form. */
export function storedRecord(record: ThreadRecord): Record<string, unknown> {
  const { key, h, lg: _format, ...rest } = record;
  const out: Record<string, unknown> = { lg: 3, ...rest };
  if (key !== (h.cp ?? '')) out.key = key;
  if (record.k === 'c') {
    out.h = storedHead(h, record.g, { cp: record.id, at: record.p, lr: record.r });
    out.cp = storedCheckpoint(record.cp, record.id, record.r);
    out.b = storedBlobs(record.b);
  } else {
    out.h = storedHead(h, record.g, {});
    if (record.to === h.cp) delete out.to;
  }
  return out;
}

/** The record `value` is (format 3 made whole), or undefined when it is not a saver record. */
export function threadRecordOf(value: unknown): ThreadRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  if (raw.lg !== 3) return isThreadRecord(value) && value.lg !== 3 ? value : undefined;
  if (typeof raw.p !== 'number' || typeof raw.g !== 'number') return undefined;
  if (typeof raw.h !== 'object' || raw.h === null) return undefined;
  const stored = raw.h as StoredHead;
  if (raw.k === 'c') {
    const id = raw.id;
    if (typeof id !== 'string' || typeof raw.r !== 'object' || raw.r === null) return undefined;
    const r = raw.r as Record<string, Ref>;
    const h = wholeHead(stored, raw.g, { cp: id, at: raw.p, lr: r });
    const cp = wholeCheckpoint(raw.cp, id, r);
    const record = { ...raw, key: raw.key ?? h.cp ?? '', h, cp, b: wholeBlobs(raw.b) };
    return record as unknown as CheckpointRecord;
  }
  if (raw.k !== 'w') return undefined;
  const h = wholeHead(stored, raw.g, {});
  const record = { ...raw, key: raw.key ?? h.cp ?? '', h, to: raw.to ?? h.cp };
  return typeof record.to === 'string' ? (record as unknown as ThreadRecord) : undefined;
}

/** What a head takes from its record when the stored head leaves it out. */
interface HeadDefaults {
  cp?: string;
  at?: number;
  lr?: Record<string, Ref>;
}

function storedHead(h: Head, g: number, own: HeadDefaults): StoredHead {
  const out: StoredHead = {};
  if (h.g !== g) out.g = h.g;
  if (own.cp === undefined || h.cp !== own.cp) out.cp = h.cp;
  if (own.at === undefined || h.at !== own.at) out.at = h.at;
  if (!h.sorted) out.sorted = false;
  if (own.lr === undefined || !sameRefs(h.lr, own.lr)) out.lr = h.lr;
  if (h.w.length > 0) out.w = h.w;
  if (Object.keys(h.late).length > 0) out.late = h.late;
  const extra: Record<string, Ref> = {};
  let holdsLr = true;
  for (const [channel, ref] of Object.entries(h.lr))
    if (!sameRef(h.heads[channel], ref)) holdsLr = false;
  for (const [channel, ref] of Object.entries(h.heads))
    if (!sameRef(h.lr[channel], ref)) extra[channel] = ref;
  if (!holdsLr) out.heads = h.heads;
  else if (Object.keys(extra).length > 0) out.hx = extra;
  return out;
}

function wholeHead(s: StoredHead, g: number, own: HeadDefaults): Head {
  const lr = s.lr ?? own.lr ?? {};
  return {
    g: s.g ?? g,
    cp: s.cp !== undefined ? s.cp : (own.cp ?? null),
    at: s.at ?? own.at ?? -1,
    sorted: s.sorted ?? true,
    lr,
    w: s.w ?? [],
    late: s.late ?? {},
    heads: s.heads ?? { ...lr, ...s.hx },
  };
}

/**
 * A serialized checkpoint without its `id` (the record's own) and without the
 * `channel_versions` entries its refs hold, when it is JSON with that id.
 */
function storedCheckpoint(cp: Stored, id: string, r: Record<string, Ref>): Stored {
  if (!('j' in cp) || !isPlainObject(cp.j) || cp.j.id !== id) return cp;
  const { id: _own, ...rest } = cp.j;
  if (isPlainObject(rest.channel_versions)) {
    const versions: Record<string, unknown> = {};
    for (const [channel, version] of Object.entries(rest.channel_versions))
      if (r[channel]?.[0] !== version) versions[channel] = version;
    rest.channel_versions = versions;
  }
  return { j: rest };
}

/** The checkpoint `storedCheckpoint` stored: its `id` back after `v`, its versions whole. */
function wholeCheckpoint(cp: unknown, id: string, r: Record<string, Ref>): unknown {
  if (typeof cp !== 'object' || cp === null || !('j' in cp) || !isPlainObject(cp.j)) return cp;
  if ('id' in cp.j) return cp;
  const { v, ...rest } = cp.j;
  if (isPlainObject(rest.channel_versions)) {
    const versions: Record<string, unknown> = {};
    for (const [channel, [version]] of Object.entries(r)) versions[channel] = version;
    rest.channel_versions = { ...versions, ...rest.channel_versions };
  }
  return { j: v === undefined ? { id, ...rest } : { v, id, ...rest } };
}

/** Channel values with a delta's empty `add` left out (most new items are pointers). */
function storedBlobs(b: Record<string, Blob>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [channel, blob] of Object.entries(b)) {
    if ('d' in blob && blob.d.add.length === 0) {
      const { add: _empty, ...d } = blob.d;
      out[channel] = { d };
    } else out[channel] = blob;
  }
  return out;
}

function wholeBlobs(b: unknown): unknown {
  if (!isPlainObject(b)) return b;
  const out: Record<string, unknown> = {};
  for (const [channel, blob] of Object.entries(b))
    out[channel] =
      isPlainObject(blob) && isPlainObject(blob.d) && !('add' in blob.d)
        ? { d: { ...blob.d, add: [] } }
        : blob;
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameRef(a: Ref | undefined, b: Ref): boolean {
  return a !== undefined && a[0] === b[0] && a[1] === b[1];
}

function sameRefs(a: Record<string, Ref>, b: Record<string, Ref>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && sameRef(b[k], a[k]!));
}
