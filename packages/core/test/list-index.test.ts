// ListIndex (src/list-index.ts): pages, children and roots equal what sorting every entry
// gives (`selectPage`), for random entries, filters, cursors and writes.
import { describe, expect, it } from 'vitest';
import { type ListableEntry, ListIndex, normalizeListOptions, selectPage } from '../src/adapter.js';
import { errorsFor } from '../src/errors.js';
import type { ListOptions } from '../src/types.js';

const errors = errorsFor('core');

/** A small deterministic random generator (tests must not depend on Math.random's seed). */
function random(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

function entry(r: (n: number) => number, i: number): ListableEntry {
  const e: ListableEntry = {
    id: `s${String(r(400)).padStart(3, '0')}-${i}`,
    updatedAt: new Date(1_700_000_000_000 + r(50) * 1000),
    folder: `f${r(4)}`,
    status: r(3) ? 'active' : 'done',
    title: `title ${r(10)}`,
    searchText: '',
  };
  if (r(3) === 0) e.parentId = `s${String(r(400)).padStart(3, '0')}-${r(i + 1)}`;
  if (r(5) === 0) e.archivedAt = new Date(1_700_000_000_000);
  return e;
}

describe('ListIndex', () => {
  it('pages like a sort of every entry, through writes, deletes and copies', () => {
    const r = random(7);
    let index = new ListIndex<ListableEntry>();
    const all = new Map<string, ListableEntry>();
    for (let i = 0; i < 3000; i++) {
      const e = entry(r, i);
      index.set(e.id, e);
      all.set(e.id, e);
      if (r(4) === 0) {
        // Rewrite or delete a random earlier entry.
        const ids = [...all.keys()];
        const id = ids[r(ids.length)]!;
        if (r(2)) {
          index.delete(id);
          all.delete(id);
        } else {
          const moved = { ...entry(r, i), id };
          index.set(id, moved);
          all.set(id, moved);
        }
      }
      if (i === 1500) index = index.copy();
    }
    expect(index.size).toBe(all.size);
    // Built at once from the same entries (one sort), it pages the same.
    const bulk = ListIndex.of(all.values());
    for (let q = 0; q < 400; q++) {
      const values = [...all.values()];
      const pick = values[r(values.length)]!;
      const options: ListOptions = {
        limit: 1 + r(40),
        offset: r(4) === 0 ? r(30) : 0,
        oldestFirst: r(2) === 0,
        includeArchived: r(2) === 0,
      };
      if (r(3) === 0) options.folder = pick.folder;
      if (r(4) === 0) options.status = pick.status;
      if (r(4) === 0) options.parentId = pick.parentId ?? pick.id;
      if (r(3) === 0) options.after = new Date(pick.updatedAt.getTime() - 1000 * r(3));
      if (r(2) === 0) options.startAfter = { updatedAt: pick.updatedAt, id: r(5) ? pick.id : '' };
      const opts = normalizeListOptions(errors, options);
      const expected = selectPage(values, opts).map((e) => e.id);
      expect(index.page(opts).map((e) => e.id)).toEqual(expected);
      expect(bulk.page(opts).map((e) => e.id)).toEqual(expected);
    }
    for (const id of [...all.keys()].slice(0, 200)) {
      const kids = [...all.values()].filter((e) => e.parentId === id).map((e) => e.id);
      expect(index.children(id)).toEqual(kids.sort());
    }
    const roots = selectPage(
      [...all.values()].filter((e) => e.parentId === undefined),
      normalizeListOptions(errors, { limit: 1000, includeArchived: true }),
    );
    expect([...index.roots()].slice(0, 1000).map((e) => e.id)).toEqual(roots.map((e) => e.id));
    index.clear();
    expect([...index.roots()]).toEqual([]);
  });
});
