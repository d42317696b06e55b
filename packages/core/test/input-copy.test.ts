// Input read once: the copy a store keeps is what was validated, whatever the caller's
// object does on a second read.
import { describe, expect, it } from 'vitest';
import { errorsFor, isSessionKitError } from '../src/errors.js';
import { normalizeCallOptions, throwIfAborted } from '../src/input/call-options.js';
import { assertCommitInput, normalizeCommitInput } from '../src/input/commit-input.js';
import { prepareCreate } from '../src/input/create-input.js';
import { copyJson, readEntries } from '../src/input/json-value-copy.js';
import { normalizeListOptions } from '../src/input/list-input.js';

const errors = errorsFor('test');
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return isSessionKitError(e) ? e.code : `raw: ${String(e)}`;
  }
  return 'ok';
};

describe('copyJson', () => {
  it('copies JSON deeply, drops undefined properties, turns -0 into 0, keeps __proto__ as data', () => {
    const source = JSON.parse('{"a":[1,{"b":-0}],"__proto__":{"x":1}}');
    source.gone = undefined;
    const copy = copyJson<Record<string, unknown>>(errors, source, 'v');
    expect(copy).toEqual(JSON.parse('{"a":[1,{"b":0}],"__proto__":{"x":1}}'));
    expect(Object.is((copy.a as [number, { b: number }])[1].b, 0)).toBe(true);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['a', '__proto__']);
    expect(copy.a).not.toBe(source.a);
  });

  it('reads every property once, even when a getter would answer differently later', () => {
    let reads = 0;
    const value = {
      get text() {
        reads++;
        return reads === 1 ? 'first' : 'second';
      },
    };
    expect(copyJson(errors, value, 'v')).toEqual({ text: 'first' });
    expect(reads).toBe(1);
  });

  it('a shared value in two places is a DAG (copied twice); a cycle is invalid_argument', () => {
    const shared = { s: 1 };
    expect(copyJson(errors, { a: shared, b: [shared, shared] }, 'v')).toEqual({
      a: { s: 1 },
      b: [{ s: 1 }, { s: 1 }],
    });
    const cyclic: Record<string, unknown> = { a: {} };
    (cyclic.a as Record<string, unknown>).back = cyclic;
    expect(() => copyJson(errors, cyclic, 'v')).toThrow(/\$\.a\.back is a cycle/);
  });

  it('rejects what JSON cannot hold, naming the path, without recursion', () => {
    expect(() => copyJson(errors, { a: [1, () => 2] }, 'msg')).toThrow(
      /msg: \$\.a\[1\] is a function/,
    );
    expect(() => copyJson(errors, { n: Number.NaN }, 'v')).toThrow(/\$\.n is NaN/);
    expect(() => copyJson(errors, [1, undefined], 'v')).toThrow(/\$\[1\] is undefined/);
    expect(() => copyJson(errors, { d: new Date(0) }, 'v')).toThrow(/\$\.d is a Date/);
    expect(() => copyJson(errors, 10n, 'v')).toThrow(/bigint/);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => copyJson(errors, deep, 'v')).toThrow(/deeper than 512/);
    let ok: unknown = 'leaf';
    for (let i = 0; i < 512; i++) ok = [ok];
    expect(copyJson(errors, ok, 'v')).toEqual(ok);
  });

  it('a getter or proxy trap that throws is invalid_argument, never a raw error', () => {
    const boom = Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(code(() => copyJson(errors, { nested: boom }, 'v'))).toBe('invalid_argument');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(code(() => copyJson(errors, [revoked.proxy], 'v'))).toBe('invalid_argument');
    const keys = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('no keys');
        },
      },
    );
    expect(code(() => readEntries(errors, keys, 'v'))).toBe('invalid_argument');
  });
});

describe('input normalisation reads once', () => {
  it('create: the stored messages are the first read, and the input is never kept', () => {
    let reads = 0;
    const message = {
      role: 'user',
      get content() {
        reads++;
        return reads === 1 ? 'hello' : 42n;
      },
    };
    const input = { id: 'a', messages: [message], metadata: { k: 'v' } };
    const session = prepareCreate(errors, input);
    expect(session.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(reads).toBe(1);
    expect(session.metadata).not.toBe(input.metadata);
    const subclassed = new (class extends Date {
      override getTime() {
        return 0;
      }
    })('2025-01-01T00:00:00.000Z');
    expect(prepareCreate(errors, { id: 'b', createdAt: subclassed }).createdAt.toISOString()).toBe(
      '2025-01-01T00:00:00.000Z',
    );
  });

  it('commit: truncate and operationId are checked, and replace excludes both append and truncate', () => {
    expect(
      normalizeCommitInput(errors, 'a', { truncate: 2, operationId: 'op', append: [] }),
    ).toEqual({
      truncate: 2,
      operationId: 'op',
      append: [],
    });
    for (const bad of [
      { truncate: -1 },
      { truncate: 2 ** 31 },
      { operationId: '' },
      { operationId: 'x'.repeat(257) },
      { operationId: 'a\u0000' },
      { replace: [], truncate: 0 },
      { replace: [], append: [] },
      { truncated: 1 },
    ]) {
      expect(
        code(() => normalizeCommitInput(errors, 'a', bad as never)),
        JSON.stringify(bad),
      ).toBe('invalid_argument');
    }
  });

  it('assertCommitInput (adapters without truncate and operation ids) rejects both keys', () => {
    expect(code(() => assertCommitInput(errors, 'a', { append: [] }))).toBe('ok');
    expect(code(() => assertCommitInput(errors, 'a', { truncate: 0 }))).toBe('invalid_argument');
    expect(code(() => assertCommitInput(errors, 'a', { operationId: 'x' }))).toBe(
      'invalid_argument',
    );
  });

  it('list options are read once; a throwing getter is invalid_argument', () => {
    let reads = 0;
    const opts = {
      get folder() {
        reads++;
        return reads === 1 ? 'a' : 42;
      },
    };
    expect(normalizeListOptions(errors, opts).folder).toBe('a');
    expect(reads).toBe(1);
  });

  it('call options: an AbortSignal or nothing; an aborted one throws aborted', () => {
    const controller = new AbortController();
    expect(normalizeCallOptions(errors, undefined, 'load')).toBeUndefined();
    expect(normalizeCallOptions(errors, {}, 'load')).toBeUndefined();
    expect(normalizeCallOptions(errors, { signal: controller.signal }, 'load')).toBe(
      controller.signal,
    );
    for (const bad of [{ signal: {} }, { timeout: 1 }, 42, null]) {
      expect(code(() => normalizeCallOptions(errors, bad, 'load'))).toBe('invalid_argument');
    }
    expect(code(() => throwIfAborted(errors, controller.signal, 'load', 'a'))).toBe('ok');
    controller.abort();
    expect(code(() => throwIfAborted(errors, controller.signal, 'load', 'a'))).toBe('aborted');
  });
});
