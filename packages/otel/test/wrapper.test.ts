// The wrapper is the same store: same capabilities and methods, the same arguments reach
// the store (trailing options too), `this` is the store, results and errors are its own,
// and close() closes it.
import {
  CAPABILITIES,
  detectCapabilities,
  isBrancher,
  isCommitter,
  isEventLog,
  isHistoryReader,
  isPruner,
  isRepairer,
  isRuntimeStatusStore,
  isSessionKitError,
  isSessionRouter,
  isStore,
  type Store,
} from '@sessionkit/core';
import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import { deriveStoreKind, instrumentStore, STORE_METHODS } from '../src/index.js';
import { baseOnly } from './support/stores.js';
import { RecordingTelemetry } from './support/telemetry.js';

const GUARDS = {
  isStore,
  isCommitter,
  isBrancher,
  isHistoryReader,
  isRuntimeStatusStore,
  isSessionRouter,
  isEventLog,
  isPruner,
  isRepairer,
};

/** A memory store that keeps, for each call, the arguments and `this` it was called with. */
class ArgumentsKeepingStore extends MemoryStore {
  readonly calls: { method: string; args: unknown[]; self: unknown }[] = [];
  override commit(...args: Parameters<MemoryStore['commit']>) {
    this.calls.push({ method: 'commit', args, self: this });
    return super.commit(...args);
  }
  override load(...args: Parameters<MemoryStore['load']>) {
    this.calls.push({ method: 'load', args, self: this });
    return super.load(...args);
  }
  override list(...args: Parameters<MemoryStore['list']>) {
    this.calls.push({ method: 'list', args, self: this });
    return super.list(...args);
  }
}

describe('instrumentStore › the same store', () => {
  const stores: [string, () => Store][] = [
    ['a memory store (every capability)', () => new MemoryStore()],
    ['a base-only store', () => baseOnly(new MemoryStore())],
    [
      'a history reader without loadMessageWindow',
      () => {
        const m = new MemoryStore();
        return { ...baseOnly(m), loadMessages: (id: string) => m.loadMessages(id) } as Store;
      },
    ],
  ];
  for (const [name, make] of stores) {
    it(`${name}: every guard answers as for the original, and no method is added`, () => {
      const original = make();
      const wrapped = instrumentStore(original);
      for (const [guard, test] of Object.entries(GUARDS))
        expect(test(wrapped), guard).toBe(test(original));
      expect(detectCapabilities(wrapped)).toEqual(detectCapabilities(original));
      const methodsOf = (s: object) =>
        STORE_METHODS.filter((m) => typeof (s as Record<string, unknown>)[m] === 'function');
      expect(methodsOf(wrapped)).toEqual(methodsOf(original));
      expect(Object.keys(wrapped).sort()).toEqual([...methodsOf(original)].sort());
      expect(
        typeof (wrapped as { loadMessageWindow?: unknown }).loadMessageWindow === 'function',
      ).toBe(typeof (original as { loadMessageWindow?: unknown }).loadMessageWindow === 'function');
    });
  }

  it('keeps every capability core defines', () => {
    // A method core adds to a contract fails the build first (src/names.ts compares
    // STORE_METHODS with FullStore); a capability core adds fails here.
    const full = new MemoryStore();
    expect(detectCapabilities(full)).toEqual([...CAPABILITIES]);
    expect(detectCapabilities(instrumentStore(full))).toEqual([...CAPABILITIES]);
  });

  it('forwards every argument unchanged, trailing ones included, with the store as this', async () => {
    const store = new ArgumentsKeepingStore();
    const wrapped = instrumentStore(store, new RecordingTelemetry().providers);
    const { id } = await wrapped.create({ id: 'forward-1' });
    const input = { append: [{ role: 'user', content: 'hi' }] };
    const signal = new AbortController().signal;
    const trailing = { signal };
    // The contract's next revision adds a trailing `{ signal }` to long calls: it must
    // reach the store as the caller passed it.
    const call = wrapped.commit as (...args: unknown[]) => Promise<unknown>;
    await call(id, input, trailing);
    await (wrapped.load as (...args: unknown[]) => Promise<unknown>)(id, trailing, 'more');
    await (wrapped.list as (...args: unknown[]) => Promise<unknown>)(undefined, trailing);
    const [commit, load, list] = store.calls;
    expect(commit!.args).toHaveLength(3);
    expect(commit!.args[0]).toBe(id);
    expect(commit!.args[1]).toBe(input);
    expect(commit!.args[2]).toBe(trailing);
    expect(load!.args).toEqual([id, trailing, 'more']);
    expect(load!.args[1]).toBe(trailing);
    expect(list!.args).toHaveLength(2);
    expect(list!.args[0]).toBeUndefined();
    expect(list!.args[1]).toBe(trailing);
    for (const c of store.calls) expect(c.self).toBe(store);
  });

  it('returns the store’s own results and rejects with the store’s own errors', async () => {
    const store = new MemoryStore();
    const wrapped = instrumentStore(store);
    const created = await wrapped.create({ id: 'same-1', title: 'x' });
    expect(created).toEqual(await store.load('same-1'));
    const error = await wrapped.load('missing-1').catch((e: unknown) => e);
    expect(isSessionKitError(error, 'not_found')).toBe(true);
    const direct = await store.load('missing-1').catch((e: unknown) => e);
    expect((error as Error).message).toBe((direct as Error).message);
  });

  it('with no SDK registered, hands back the store’s own promise', async () => {
    const returned: unknown[] = [];
    class ReturningStore extends MemoryStore {
      override load(...args: Parameters<MemoryStore['load']>) {
        const promise = super.load(...args);
        returned.push(promise);
        return promise;
      }
    }
    const wrapped = instrumentStore(new ReturningStore());
    await wrapped.create({ id: 'own-1' });
    const promise = wrapped.load('own-1');
    expect(promise).toBe(returned[0]);
    expect((await promise).id).toBe('own-1');
  });

  it('keeps a synchronous throw synchronous', () => {
    class EagerStore extends MemoryStore {
      // A store whose argument check runs before it returns a promise.
      override load(id: string) {
        if (typeof id !== 'string') throw new TypeError('id must be a string');
        return super.load(id);
      }
    }
    const wrapped = instrumentStore(new EagerStore());
    expect(() => (wrapped.load as (id: unknown) => unknown)(7)).toThrow(TypeError);
  });

  it('close() closes the store; later calls fail with closed, through either', async () => {
    const store = new MemoryStore();
    const wrapped = instrumentStore(store);
    await wrapped.create({ id: 'close-1' });
    await wrapped.close();
    await wrapped.close();
    for (const s of [store, wrapped]) {
      const error = await s.load('close-1').catch((e: unknown) => e);
      expect(isSessionKitError(error, 'closed'), String(error)).toBe(true);
    }
  });

  it('methods work detached from the wrapper', async () => {
    const { create, load } = instrumentStore(new MemoryStore());
    await create({ id: 'detached-1', title: 't' });
    expect((await load('detached-1')).title).toBe('t');
  });
});

describe('instrumentStore › options', () => {
  it('rejects what is not a store, unknown options and malformed ones with invalid_argument', () => {
    const bad: [unknown, unknown][] = [
      [{}, undefined],
      [null, undefined],
      [new MemoryStore(), { tracer: {} }],
      [new MemoryStore(), { tracerProvider: {} }],
      [new MemoryStore(), { meterProvider: 'global' }],
      [new MemoryStore(), { storeKind: '' }],
      [new MemoryStore(), { storeKind: 'x'.repeat(65) }],
      [new MemoryStore(), { sessionIds: 'yes' }],
      [new MemoryStore(), 'options'],
    ];
    for (const [store, options] of bad) {
      let error: unknown;
      try {
        instrumentStore(store as Store, options as never);
      } catch (e) {
        error = e;
      }
      expect(isSessionKitError(error, 'invalid_argument'), JSON.stringify(options)).toBe(true);
      expect((error as Error).message).toMatch(/^\[sessionkit\/otel\] instrumentStore: /);
    }
  });

  it('derives the store kind from the class name', () => {
    expect(deriveStoreKind(new MemoryStore())).toBe('memory');
    class PostgresStore {}
    class S3Store {}
    class Sessions {}
    expect(deriveStoreKind(new PostgresStore())).toBe('postgres');
    expect(deriveStoreKind(new S3Store())).toBe('s3');
    expect(deriveStoreKind(new Sessions())).toBe('unknown');
    expect(deriveStoreKind({})).toBe('unknown');
    expect(deriveStoreKind(Object.create(null))).toBe('unknown');
  });
});
