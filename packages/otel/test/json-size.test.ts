// jsonSizeOf counts what JSON.stringify would write, without running the value's code.
import { describe, expect, it } from 'vitest';
import { jsonSizeOf, MAX_SIZED_VALUES } from '../src/json-size.js';

describe('jsonSizeOf', () => {
  it('equals the UTF-8 length of JSON.stringify for JSON values', () => {
    const values: unknown[] = [
      null,
      true,
      false,
      0,
      -0,
      1.5e-7,
      1e21,
      -42,
      '',
      'plain',
      'quotes " and \\ backslash, \n newline, \u0001 control',
      'é 漢字 🎉 \ud83d lone surrogate',
      [],
      {},
      [1, 'two', [3, { four: 4 }], null],
      { role: 'user', content: [{ type: 'text', text: 'hé' }], skipped: undefined },
      JSON.parse('{"__proto__": {"x": 1}, "constructor": "c"}'),
      Object.assign(Object.create(null), { bare: ['object'] }),
    ];
    for (const v of values) {
      expect(jsonSizeOf(v), JSON.stringify(v)).toBe(Buffer.byteLength(JSON.stringify(v)));
    }
  });

  it('gives up on what it could only read by running code, or could not hold', () => {
    let reads = 0;
    const getter = Object.defineProperty({}, 'text', {
      enumerable: true,
      get: () => {
        reads++;
        return 'x';
      },
    });
    const proxy = new Proxy({ text: 'x' }, {});
    const cases: unknown[] = [
      getter,
      [getter],
      proxy,
      { nested: [proxy] },
      new Date(0),
      { toJSON: () => 'x' },
      () => 1,
      Number.NaN,
      undefined,
      [undefined],
      Symbol('s'),
      10n,
    ];
    for (const v of cases) expect(jsonSizeOf(v)).toBeUndefined();
    expect(reads).toBe(0);
  });

  it('stops after MAX_SIZED_VALUES values, also on a cycle', () => {
    expect(jsonSizeOf(new Array(MAX_SIZED_VALUES - 1).fill(0))).toBe(
      Buffer.byteLength(JSON.stringify(new Array(MAX_SIZED_VALUES - 1).fill(0))),
    );
    expect(jsonSizeOf(new Array(MAX_SIZED_VALUES).fill(0))).toBeUndefined();
    const cycle: unknown[] = [];
    cycle.push(cycle);
    expect(jsonSizeOf(cycle)).toBeUndefined();
  });
});
