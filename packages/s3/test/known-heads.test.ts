import { describe, expect, it } from 'vitest';
import { KnownHeads } from '../src/known-heads.js';
import type { Current } from '../src/session-log.js';

const head = (id: string, n: number) => ({ id, n }) as unknown as Current;

describe('KnownHeads', () => {
  it('forgets the least recently remembered session past its limit', () => {
    const heads = new KnownHeads(3);
    for (const id of ['a', 'b', 'c']) heads.set(id, head(id, 1));
    heads.set('a', head('a', 2)); // remembered again: now the newest
    heads.set('d', head('d', 1));
    expect(heads.size).toBe(3);
    expect(heads.get('b')).toBeUndefined();
    expect(heads.get('a')?.n).toBe(2);
    expect(['c', 'd'].map((id) => heads.get(id)?.n)).toEqual([1, 1]);
    heads.delete('a');
    expect([heads.get('a'), heads.size]).toEqual([undefined, 2]);
  });

  it('stays at its limit however many sessions are remembered', () => {
    const heads = new KnownHeads(16);
    for (let i = 0; i < 10_000; i++) heads.set(`s${i}`, head(`s${i}`, i));
    expect(heads.size).toBe(16);
    expect(heads.get('s9999')?.n).toBe(9999);
    expect(heads.get('s9983')).toBeUndefined();
  });
});
