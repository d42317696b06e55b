import { describe, expect, it } from 'vitest';
import { normalizeListOptions, prepareCreate } from '../src/adapter.js';
import { errorsFor } from '../src/errors.js';
import { commitTurn } from '../src/helpers/commit-turn.js';
import { loadMessageWindow } from '../src/helpers/history-window.js';
import { assertJsonValue, MAX_JSON_DEPTH } from '../src/json-value.js';
import { normalizeMessageWindow, windowBounds } from '../src/message-window.js';
import { cloneJson } from '../src/session.js';
import { MAX_DATE_MS, MAX_MESSAGE_INDEX, MIN_DATE_MS } from '../src/validate.js';
import { codeOfCall as codeOf } from './fixtures/codes.js';

const errors = errorsFor('test');

/** `{a: {a: … leaf}}` nested `depth` objects deep, built without recursion. */
function nested(depth: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? { a: v } : [v];
  return v;
}

describe('JSON nesting limit', () => {
  it('accepts 512 levels and rejects 513, checked without recursion', () => {
    expect(codeOf(() => assertJsonValue(errors, nested(MAX_JSON_DEPTH), 'v'))).toBe('ok');
    expect(codeOf(() => assertJsonValue(errors, nested(MAX_JSON_DEPTH + 1), 'v'))).toBe(
      'invalid_argument',
    );
    // Far deeper than any call stack: a clean error, not a RangeError.
    expect(codeOf(() => assertJsonValue(errors, nested(200_000), 'v'))).toBe('invalid_argument');
  });

  it('still finds cycles, non-JSON leaves and undefined array items at depth', () => {
    const cyclic: Record<string, unknown> = { x: [1, 2] };
    (cyclic.x as unknown[]).push(cyclic);
    expect(codeOf(() => assertJsonValue(errors, cyclic, 'v'))).toBe('invalid_argument');
    // The same object twice, side by side, is not a cycle.
    const shared = { s: 1 };
    expect(codeOf(() => assertJsonValue(errors, [shared, shared, { shared }], 'v'))).toBe('ok');
    for (const leaf of [Number.NaN, () => 1, 1n, Symbol('s'), new Date()]) {
      expect(codeOf(() => assertJsonValue(errors, nested(40, leaf), 'v'))).toBe('invalid_argument');
    }
    expect(codeOf(() => assertJsonValue(errors, nested(3, [1, undefined]), 'v'))).toBe(
      'invalid_argument',
    );
    expect(
      codeOf(() => assertJsonValue(errors, { a: undefined, b: [{ c: undefined }] }, 'v')),
    ).toBe('ok');
  });

  it('names the path of the bad value', () => {
    try {
      assertJsonValue(errors, { a: [0, { b: Number.POSITIVE_INFINITY }] }, 'state');
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).toContain('state: $.a[1].b is Infinity');
    }
    // A deep path shows its first and last steps, root first.
    let deep: unknown = 1;
    for (let i = 600; i >= 1; i--) deep = { [`d${i}`]: deep };
    expect(() => assertJsonValue(errors, { root: deep }, 's')).toThrow(
      '$.root.d1.d2.d3.d4.d5….d506.d507.d508.d509.d510.d511 is nested deeper than 512 levels',
    );
  });
});

describe('keys that name prototype slots are data', () => {
  it('cloneJson keeps __proto__, constructor and prototype as own keys and drops -0', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"constructor":"c","prototype":[-0],"n":-0}');
    const copy = cloneJson(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'constructor', 'prototype', 'n']);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ x: 1 });
    expect(Object.is(copy.n, 0)).toBe(true);
    expect(Object.is(copy.prototype[0], 0)).toBe(true);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
  });

  it('create keeps them in state and metadata', () => {
    const s = prepareCreate(errors, {
      id: 'a',
      state: JSON.parse('{"__proto__":{"polluted":true}}'),
      metadata: JSON.parse('{"__proto__":"m"}'),
    });
    expect(Object.getOwnPropertyDescriptor(s.state, '__proto__')?.value).toEqual({
      polluted: true,
    });
    expect(Object.getOwnPropertyDescriptor(s.metadata, '__proto__')?.value).toBe('m');
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

describe('dates, counters and message indexes', () => {
  it('accepts years 1–9999 to the millisecond and rejects anything outside', () => {
    for (const ms of [MIN_DATE_MS, MAX_DATE_MS, 0]) {
      expect(
        codeOf(() =>
          prepareCreate(errors, {
            id: 'a',
            createdAt: new Date(ms),
            updatedAt: new Date(MAX_DATE_MS),
          }),
        ),
      ).toBe('ok');
    }
    for (const ms of [MIN_DATE_MS - 1, MAX_DATE_MS + 1, 8.64e15]) {
      expect(codeOf(() => prepareCreate(errors, { id: 'a', updatedAt: new Date(ms) }))).toBe(
        'invalid_argument',
      );
      expect(codeOf(() => normalizeListOptions(errors, { after: new Date(ms) }))).toBe(
        'invalid_argument',
      );
    }
  });

  it('branchedAtTurn fits in 2^31 − 1; -0 counters are stored as 0', () => {
    expect(
      codeOf(() => prepareCreate(errors, { id: 'a', branchedAtTurn: MAX_MESSAGE_INDEX })),
    ).toBe('ok');
    expect(
      codeOf(() => prepareCreate(errors, { id: 'a', branchedAtTurn: MAX_MESSAGE_INDEX + 1 })),
    ).toBe('invalid_argument');
    const s = prepareCreate(errors, { id: 'a', tokenCount: -0, costUsd: -0, turnCount: -0 });
    for (const v of [s.tokenCount, s.costUsd, s.turnCount]) expect(Object.is(v, 0)).toBe(true);
  });
});

describe('list startAfter', () => {
  it('takes the last summary of a page as documented, and still rejects typos', () => {
    const summary = {
      id: 'x',
      title: '',
      folder: '',
      createdAt: new Date(1),
      updatedAt: new Date(5),
      model: '',
      provider: '',
      tokenCount: 0,
      costUsd: 0,
      turnCount: 0,
      metadata: {},
      status: 'active',
      children: [],
      revision: 1,
      messageCount: 0,
    };
    expect(normalizeListOptions(errors, { startAfter: summary }).startAfter).toEqual({
      updatedAt: 5,
      id: 'x',
    });
    const typo = { updatedAt: new Date(5), id: 'x', updatedat: 1 } as never;
    expect(codeOf(() => normalizeListOptions(errors, { startAfter: typo }))).toBe(
      'invalid_argument',
    );
  });
});

describe('message windows', () => {
  it('validates the window', () => {
    expect(normalizeMessageWindow(errors, undefined)).toEqual({ kind: 'all' });
    expect(normalizeMessageWindow(errors, {})).toEqual({ kind: 'all' });
    expect(normalizeMessageWindow(errors, { last: 0 })).toEqual({ kind: 'last', last: 0 });
    expect(normalizeMessageWindow(errors, { limit: 2 })).toEqual({
      kind: 'range',
      offset: 0,
      limit: 2,
    });
    const bad = [
      { last: -1 },
      { last: 1.5 },
      { offset: -1 },
      { limit: Number.NaN },
      { last: 1, offset: 0 },
      { last: 1, limit: 1 },
      { first: 1 },
      'last',
      null,
    ];
    for (const w of bad) {
      expect(codeOf(() => normalizeMessageWindow(errors, w as never))).toBe('invalid_argument');
    }
  });

  it('selects the right slice; past the end is empty', () => {
    const b = (w: Parameters<typeof normalizeMessageWindow>[1], n: number) =>
      windowBounds(normalizeMessageWindow(errors, w), n);
    expect(b({ last: 3 }, 10)).toEqual({ start: 7, end: 10 });
    expect(b({ last: 30 }, 10)).toEqual({ start: 0, end: 10 });
    expect(b({ last: 0 }, 10)).toEqual({ start: 10, end: 10 });
    expect(b({ offset: 4, limit: 3 }, 10)).toEqual({ start: 4, end: 7 });
    expect(b({ offset: 8, limit: 5 }, 10)).toEqual({ start: 8, end: 10 });
    expect(b({ offset: 12, limit: 5 }, 10)).toEqual({ start: 10, end: 10 });
    expect(b({ offset: 4 }, 10)).toEqual({ start: 4, end: 10 });
    expect(b({}, 10)).toEqual({ start: 0, end: 10 });
  });

  it('the generic fallback slices one full load and reports the position', async () => {
    const messages = Array.from({ length: 10 }, (_, i) => ({ role: 'user', content: `m${i}` }));
    let loads = 0;
    const store = {
      load: async (id: string) => {
        loads++;
        return { id, messages, revision: 4 };
      },
    } as never;
    const w = await loadMessageWindow(store, 'a', { last: 3 });
    expect(w).toEqual({ messages: messages.slice(7), offset: 7, messageCount: 10, revision: 4 });
    expect(loads).toBe(1);
    await expect(loadMessageWindow(store, 'a', { last: -1 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(loads).toBe(1);
  });
});

describe('commitTurn options', () => {
  it('are rejected when unknown even when the store commits natively', async () => {
    let commits = 0;
    const store = {
      commit: async () => {
        commits++;
        return { revision: 2, messageCount: 0, updatedAt: new Date() };
      },
    } as never;
    await expect(commitTurn(store, 'a', {}, { maxRetry: 3 } as never)).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(commitTurn(store, 'a', {}, { maxRetries: -1 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(commits).toBe(0);
    await commitTurn(store, 'a', {}, { maxRetries: 2 });
    expect(commits).toBe(1);
  });
});
