import { MemoryStore } from '@sessionkit/memory';
import { describe, expect, it } from 'vitest';
import {
  type ConformanceInitializer,
  formatReport,
  runConformanceSuite,
  SPEC_NAMES,
} from '../src/index.js';
import { ALL_SPECS } from '../src/specs/index.js';

/** Only the six base methods of a memory store: every optional capability is absent. */
function baseOnly(inner: MemoryStore) {
  return {
    create: inner.create.bind(inner),
    load: inner.load.bind(inner),
    save: inner.save.bind(inner),
    delete: inner.delete.bind(inner),
    list: inner.list.bind(inner),
    close: inner.close.bind(inner),
  };
}

describe('the conformance harness', () => {
  it('has one spec file per contract plus bad input and concurrency, each with tests', () => {
    expect([...SPEC_NAMES].sort()).toEqual(Object.keys(ALL_SPECS).sort());
    for (const name of SPEC_NAMES) expect(ALL_SPECS[name].length, name).toBeGreaterThan(0);
    expect(ALL_SPECS['bad-input'].length).toBeGreaterThanOrEqual(30);
  });

  it('rejects malformed initializers with a clear message', async () => {
    await expect(runConformanceSuite(null as never)).rejects.toThrow(/must be an object/);
    await expect(
      runConformanceSuite({ name: '', create: () => new MemoryStore() }),
    ).rejects.toThrow(/non-empty "name"/);
    await expect(runConformanceSuite({ name: 'x' } as never)).rejects.toThrow(/create\(\)/);
    await expect(
      runConformanceSuite({
        name: 'x',
        create: () => new MemoryStore(),
        destory: () => {},
      } as never),
    ).rejects.toThrow(/unknown key "destory"/);
    await expect(
      runConformanceSuite({ name: 'x', create: () => new MemoryStore(), timeoutMs: -1 }),
    ).rejects.toThrow(/timeoutMs/);
  });

  it('detects capabilities from methods and reports missing ones as not implemented', async () => {
    const init: ConformanceInitializer = {
      name: 'base-only',
      create: () => baseOnly(new MemoryStore()),
    };
    const report = await runConformanceSuite(init);
    expect(report.capabilities.Store.status).toBe('passed');
    expect(report.capabilities.Store.failed).toBe(0);
    for (const cap of [
      'Committer',
      'Brancher',
      'HistoryReader',
      'RuntimeStatusStore',
      'SessionRouter',
      'EventLog',
      'Pruner',
      'Repairer',
    ] as const) {
      expect(report.capabilities[cap].status, cap).toBe('not implemented');
      expect(report.capabilities[cap].passed, cap).toBe(0);
    }
    // Tests of the base contract that need a probe the initializer lacks are skipped, not passed.
    const probeTest = report.tests.find((t) => t.name === 'listing reads no message bodies');
    expect(probeTest?.status).toBe('skipped');
    expect(formatReport(report)).toMatch(/Committer\s+not implemented/);
  });

  it('records every test, and a store whose create() throws fails every test', async () => {
    const report = await runConformanceSuite(
      {
        name: 'unreachable',
        create: () => {
          throw new Error('connection refused');
        },
      },
      { specs: ['store'] },
    );
    expect(report.tests).toHaveLength(ALL_SPECS.store.length);
    expect(
      report.tests.every((t) => t.status === 'failed' && /connection refused/.test(t.detail ?? '')),
    ).toBe(true);
    expect(report.capabilities.Store.status).toBe('failed');
  });

  it('fails a test that exceeds its timeout instead of hanging', async () => {
    const inner = new MemoryStore();
    const stuck = { ...baseOnly(inner), load: () => new Promise<never>(() => {}) };
    const report = await runConformanceSuite(
      { name: 'stuck', create: () => stuck, timeoutMs: 200 },
      { specs: ['store'] },
    );
    const loadTest = report.tests.find(
      (t) => t.name === 'load of a missing session fails with not_found',
    );
    expect(loadTest?.status).toBe('failed');
    expect(loadTest?.detail).toMatch(/timed out/);
  });
});
