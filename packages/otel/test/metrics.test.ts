// The metrics of each operation, read back through the SDK's in-memory metric exporter.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics, trace } from '@opentelemetry/api';
import { commitTurn, type Message } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import { MemoryStore } from '@sessionkit/memory';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SPAN_ATTRIBUTES as A,
  DURATION_BUCKETS,
  instrumentStore,
  MAX_PENDING_RETRIES,
  METRIC_NAMES,
} from '../src/index.js';
import { baseOnly } from './support/stores.js';
import { RecordingTelemetry } from './support/telemetry.js';

const user = (content: string): Message => ({ role: 'user', content });
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('metrics › duration', () => {
  it('one histogram in seconds, a series per operation and outcome, with the advised buckets', async () => {
    const telemetry = new RecordingTelemetry();
    const store = instrumentStore(new MemoryStore(), telemetry.providers);
    await store.create({ id: 'dur-1' });
    await store.commit('dur-1', { append: [user('a')] });
    await store.commit('dur-1', { append: [user('b')] });
    await store.load('missing-1').catch(() => {});
    const metric = (await telemetry.metrics()).get(METRIC_NAMES.duration)!;
    expect(metric.descriptor.unit).toBe('s');
    const series = metric.dataPoints.map((p) => {
      const value = p.value as { count: number; sum: number; buckets: { boundaries: number[] } };
      expect(value.buckets.boundaries).toEqual(DURATION_BUCKETS);
      expect(value.sum).toBeGreaterThan(0);
      expect(value.sum).toBeLessThan(60);
      return [p.attributes, value.count];
    });
    expect(series).toEqual(
      expect.arrayContaining([
        [{ [A.operation]: 'create', [A.storeKind]: 'memory' }, 1],
        [{ [A.operation]: 'commit', [A.storeKind]: 'memory' }, 2],
        [{ [A.operation]: 'load', [A.storeKind]: 'memory', [A.errorType]: 'not_found' }, 1],
      ]),
    );
    expect(series).toHaveLength(3);
    await telemetry.shutdown();
  });
});

describe('metrics › counters', () => {
  it('conflicts, and the retry of a conflicting save by commitTurn’s fallback', async () => {
    const telemetry = new RecordingTelemetry();
    const store = instrumentStore(baseOnly(new MemoryStore()), {
      ...telemetry.providers,
      storeKind: 'memory',
    });
    await store.create({ id: 'race-1' });
    // Both load revision 1; the second save conflicts, reloads and saves again.
    await Promise.all([
      commitTurn(store, 'race-1', { append: [user('a')] }),
      commitTurn(store, 'race-1', { append: [user('b')] }),
    ]);
    expect((await store.load('race-1')).messages).toHaveLength(2);
    expect(await telemetry.total(METRIC_NAMES.conflicts, { [A.operation]: 'save' })).toBe(1);
    expect(await telemetry.total(METRIC_NAMES.retries)).toBe(1);
    expect(
      await telemetry.total(METRIC_NAMES.retries, {
        [A.operation]: 'save',
        [A.retryOf]: 'conflict',
      }),
    ).toBe(1);
    const saves = telemetry.spansOf('save');
    expect(saves.map((s) => [s.attributes[A.errorType], s.attributes[A.retryOf]])).toEqual([
      [undefined, undefined],
      ['conflict', undefined],
      [undefined, 'conflict'],
    ]);
    await telemetry.shutdown();
  });

  it('a conflicting commit that the caller does not retry is a conflict and no retry', async () => {
    const telemetry = new RecordingTelemetry();
    const store = instrumentStore(new MemoryStore(), telemetry.providers);
    await store.create({ id: 'stale-1' });
    await store.commit('stale-1', { append: [user('a')] });
    await store.commit('stale-1', { expectedRevision: 1, append: [user('b')] }).catch(() => {});
    await store.commit('other-1', { append: [user('c')] }).catch(() => {});
    expect(await telemetry.total(METRIC_NAMES.conflicts)).toBe(1);
    expect(await telemetry.total(METRIC_NAMES.retries)).toBe(0);
    await store.commit('stale-1', { expectedRevision: 2, append: [user('b')] });
    expect(await telemetry.total(METRIC_NAMES.retries, { [A.retryOf]: 'conflict' })).toBe(1);
    await telemetry.shutdown();
  });

  it('unavailable from a file store that cannot reach its folder, and the retry that succeeds', async () => {
    const telemetry = new RecordingTelemetry();
    const root = mkdtempSync(join(tmpdir(), 'sk-otel-'));
    dirs.push(root);
    const dir = join(root, 'store');
    symlinkSync('store', dir); // a link to itself: every path under it fails with ELOOP
    const store = instrumentStore(new FileStore({ dir }), telemetry.providers);
    const first = await store.create({ id: 'loop-1' }).catch((e: unknown) => e);
    expect((first as { code?: string }).code).toBe('unavailable');
    expect(telemetry.spansOf('create')[0]!.attributes).toMatchObject({
      [A.storeKind]: 'file',
      [A.errorType]: 'unavailable',
      [A.retryable]: true,
    });
    unlinkSync(dir);
    mkdirSync(dir, { mode: 0o700 });
    await store.create({ id: 'loop-1' });
    expect(await telemetry.total(METRIC_NAMES.unavailable, { [A.operation]: 'create' })).toBe(1);
    expect(
      await telemetry.total(METRIC_NAMES.retries, {
        [A.operation]: 'create',
        [A.retryOf]: 'unavailable',
      }),
    ).toBe(1);
    expect(telemetry.spansOf('create')[1]!.attributes[A.retryOf]).toBe('unavailable');
    await store.close();
    await telemetry.shutdown();
  });

  it('messages written by create, save and successful commits; none by failed ones', async () => {
    const telemetry = new RecordingTelemetry();
    const store = instrumentStore(new MemoryStore(), telemetry.providers);
    await store.create({ id: 'w-1', messages: [user('a'), user('b')] });
    await store.commit('w-1', { append: [user('c')] });
    await store.commit('w-1', { replace: [user('d'), user('e'), user('f')] });
    await store.commit('w-1', { expectedMessageCount: 0, append: [user('g')] }).catch(() => {});
    await store.save(await store.load('w-1'));
    await store.branch('w-1', 1);
    const total = (operation: string) =>
      telemetry.total(METRIC_NAMES.messagesWritten, { [A.operation]: operation });
    expect(await total('create')).toBe(2);
    expect(await total('commit')).toBe(4);
    expect(await total('save')).toBe(3);
    expect(await total('branch')).toBe(0);
    await telemetry.shutdown();
  });

  it('no metric carries a session id, even with sessionIds: true', async () => {
    const telemetry = new RecordingTelemetry();
    const store = instrumentStore(new MemoryStore(), { ...telemetry.providers, sessionIds: true });
    await store.create({ id: 'noid-1', messages: [user('a')] });
    await store.commit('noid-1', { expectedRevision: 9 }).catch(() => {});
    await store.commit('noid-1', { append: [user('b')] });
    const allowed = new Set([A.operation, A.storeKind, A.errorType, A.retryOf]);
    let points = 0;
    for (const metric of (await telemetry.metrics()).values()) {
      for (const p of metric.dataPoints) {
        points++;
        expect(Object.keys(p.attributes).filter((k) => !allowed.has(k as never))).toEqual([]);
        expect(JSON.stringify(p.attributes)).not.toContain('noid-1');
      }
    }
    expect(points).toBeGreaterThan(3);
    await telemetry.shutdown();
  });

  it('remembers a bounded number of failed calls waiting for a retry, oldest forgotten first', async () => {
    const telemetry = new RecordingTelemetry();
    const store = instrumentStore(new MemoryStore(), telemetry.providers);
    // One more conflicting session than are remembered: the first one is forgotten.
    for (let i = 0; i <= MAX_PENDING_RETRIES; i++) {
      await store.create({ id: `bound-${i}` });
      await store.commit(`bound-${i}`, { expectedRevision: 5 }).catch(() => {});
    }
    expect(await telemetry.total(METRIC_NAMES.conflicts)).toBe(MAX_PENDING_RETRIES + 1);
    await store.commit('bound-0', { append: [user('a')] });
    expect(await telemetry.total(METRIC_NAMES.retries)).toBe(0);
    await store.commit(`bound-${MAX_PENDING_RETRIES}`, { append: [user('a')] });
    expect(await telemetry.total(METRIC_NAMES.retries)).toBe(1);
    await telemetry.shutdown();
  });
});

describe('metrics › the global providers', () => {
  it('default to the global meter provider (at the call) and tracer provider (even registered later)', async () => {
    const telemetry = new RecordingTelemetry();
    metrics.setGlobalMeterProvider(telemetry.meterProvider);
    try {
      const store = instrumentStore(new MemoryStore());
      trace.setGlobalTracerProvider(telemetry.tracerProvider);
      await store.create({ id: 'global-1' });
      expect(telemetry.spansOf('create')).toHaveLength(1);
      const points = await telemetry.points(METRIC_NAMES.duration);
      expect(points.map((p) => p.attributes[A.operation])).toEqual(['create']);
    } finally {
      trace.disable();
      metrics.disable();
      await telemetry.shutdown();
    }
  });
});
