// The small pieces of the adapter kit that adapters asked for so that no rule is restated
// outside core: each is the one definition the store rules above are built from.
import { describe, expect, it } from 'vitest';
import { compareRouterRows } from '../src/adapter-rules.js';
import { commitRewritesHistory } from '../src/history-lineage.js';
import { metadataPatchParts, titleMatchesQuery } from '../src/session.js';

describe('the adapter kit', () => {
  it('metadataPatchParts: null removes a key, a string sets it, __proto__ is data', () => {
    const parts = metadataPatchParts(JSON.parse('{"a":"1","b":null,"__proto__":"x"}'));
    expect(parts.remove).toEqual(['b']);
    expect(Object.keys(parts.set).sort()).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(parts.set)).toBe(Object.prototype);
    expect(metadataPatchParts({})).toEqual({ set: {}, remove: [] });
  });

  it('titleMatchesQuery compares the lower-cased title with an already lower-cased query', () => {
    expect(titleMatchesQuery('Release NOTES', 'notes')).toBe(true);
    expect(titleMatchesQuery('Release', 'notes')).toBe(false);
    expect(titleMatchesQuery('Release NOTES', 'NOTES')).toBe(false);
  });

  it('commitRewritesHistory: any replace (even empty) rewrites; appends and patches do not', () => {
    expect(commitRewritesHistory({ replace: [] })).toBe(true);
    expect(commitRewritesHistory({})).toBe(false);
  });

  it('compareRouterRows: newest first, then the tuple as list orders ids', () => {
    const row = (channel: string, ms: number) => ({
      channel,
      chatKey: 'c',
      thread: '',
      updatedAt: new Date(ms),
    });
    const rows = [row('a', 1), row('b', 3), row('c', 3), row('d', 2)];
    expect(rows.sort(compareRouterRows).map((r) => r.channel)).toEqual(['c', 'b', 'd', 'a']);
  });
});
