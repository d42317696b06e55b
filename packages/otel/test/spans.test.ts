// The span of each operation, read back from the SDK's in-memory exporter.

import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { commitTurn, type Message } from '@sessionkit/core';
import { MemoryStore } from '@sessionkit/memory';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  SPAN_ATTRIBUTES as A,
  INSTRUMENTATION_NAME,
  instrumentStore,
  STORE_METHODS,
} from '../src/index.js';
import { RecordingTelemetry } from './support/telemetry.js';

const telemetry = new RecordingTelemetry();
afterAll(() => telemetry.shutdown());
beforeEach(() => telemetry.resetSpans());

const user = (content: string): Message => ({ role: 'user', content });
const turn = [user('one'), { role: 'assistant', content: 'two' }];

/** The attributes of the only span named `sessionkit.<method>` recorded so far. */
function only(method: string) {
  const spans = telemetry.spansOf(method);
  expect(spans.map((s) => s.name)).toEqual([`sessionkit.${method}`]);
  return spans[0]!;
}

describe('spans › one per call, named after the method', () => {
  it('every contract method of a memory store makes one INTERNAL span of its name', async () => {
    const store = instrumentStore(new MemoryStore(), telemetry.providers);
    const { id } = await store.create({ id: 'every-1', messages: [user('a')] });
    const calls: Record<(typeof STORE_METHODS)[number], () => Promise<unknown>> = {
      create: () => store.create({ id: 'every-2' }),
      load: () => store.load(id),
      save: async () => store.save(await store.load('every-2')),
      list: () => store.list({ folder: '' }),
      commit: () => store.commit(id, { append: turn }),
      branch: () => store.branch(id, 1),
      clone: () => store.clone(id),
      merge: async () => store.merge((await store.branch(id, 3)).id),
      loadMessages: () => store.loadMessages(id, { last: 1 }),
      loadMessageWindow: () => store.loadMessageWindow(id, { offset: 1, limit: 1 }),
      saveRuntimeStatus: () => store.saveRuntimeStatus(id, { phase: 'x' }),
      loadRuntimeStatus: () => store.loadRuntimeStatus(id),
      bind: () => store.bind('c', 'k', 't', id),
      resolve: () => store.resolve('c', 'k', 't', ''),
      touch: () => store.touch('c', 'k', 't'),
      recent: () => store.recent(5),
      follow: () => store.follow('c', 'k', ''),
      unbind: () => store.unbind('c', 'k', 't'),
      append: () => store.append(id, 'tool.start', { n: 1 }),
      events: () => store.events(id, { afterSequence: 0 }),
      repair: () => store.repair(),
      enforceMax: () => store.enforceMax(100),
      delete: () => store.delete('every-2'),
      close: () => store.close(),
    };
    // In the order above (close last); the record's type makes it name every method.
    const methods = Object.keys(calls) as (keyof typeof calls)[];
    expect([...methods].sort()).toEqual([...STORE_METHODS].sort());
    for (const method of methods) {
      telemetry.resetSpans();
      await calls[method]();
      const spans = telemetry.spans().filter((s) => s.attributes[A.operation] === method);
      expect(
        spans.map((s) => s.name),
        method,
      ).toEqual([`sessionkit.${method}`]);
      const span = spans[0]!;
      expect(span.kind).toBe(SpanKind.INTERNAL);
      expect(span.instrumentationScope.name).toBe(INSTRUMENTATION_NAME);
      expect(span.attributes[A.storeKind]).toBe('memory');
      expect(span.status.code, method).toBe(SpanStatusCode.UNSET);
      expect(span.events).toEqual([]);
    }
  });
});

describe('spans › attributes', () => {
  let store: ReturnType<typeof instrumentStore<MemoryStore>>;
  beforeAll(() => {
    store = instrumentStore(new MemoryStore(), { ...telemetry.providers, storeKind: 'ram' });
  });

  it('commit: messages written, the kind of write, the result, the bytes appended', async () => {
    await store.create({ id: 'attr-1' });
    telemetry.resetSpans();
    await store.commit('attr-1', { append: turn, increment: { turnCount: 1 } });
    expect(only('commit').attributes).toEqual({
      [A.operation]: 'commit',
      [A.storeKind]: 'ram',
      [A.messagesWritten]: 2,
      [A.commitReplace]: false,
      [A.commitConditional]: false,
      [A.commitOperationId]: false,
      [A.messageCount]: 2,
      [A.revision]: 2,
      [A.requestBytes]: Buffer.byteLength(JSON.stringify(turn)),
    });
    telemetry.resetSpans();
    await store.commit('attr-1', { expectedRevision: 2, replace: [user('only')] });
    expect(only('commit').attributes).toMatchObject({
      [A.messagesWritten]: 1,
      [A.commitReplace]: true,
      [A.commitConditional]: true,
      [A.messageCount]: 1,
      [A.revision]: 3,
    });
    expect(only('commit').attributes[A.requestBytes]).toBeUndefined();
  });

  it('a failed call: error.type, retryable, an exception event and a status with the code only', async () => {
    const error = await store
      .commit('attr-1', { expectedRevision: 1, append: turn })
      .catch((e) => e);
    const span = only('commit');
    expect(span.attributes).toMatchObject({
      [A.errorType]: 'conflict',
      [A.retryable]: false,
      [A.commitConditional]: true,
      [A.messagesWritten]: 2,
    });
    expect(span.attributes[A.revision]).toBeUndefined();
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'conflict' });
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      ['exception', { 'exception.type': 'SessionKitError', 'exception.message': 'conflict' }],
    ]);
    // The store's message names the session; the span does not carry it.
    expect((error as Error).message).toContain('attr-1');
    expect(JSON.stringify(span.attributes)).not.toContain('attr-1');
  });

  it('an aborted call: error.type aborted, not retryable, and not a failure to retry', async () => {
    await store.create({ id: 'abort-1' });
    telemetry.resetSpans();
    const error = await store.load('abort-1', { signal: AbortSignal.abort() }).catch((e) => e);
    expect((error as { code?: string }).code).toBe('aborted');
    expect(only('load').attributes).toMatchObject({
      [A.errorType]: 'aborted',
      [A.retryable]: false,
    });
    expect(only('load').status).toEqual({ code: SpanStatusCode.ERROR, message: 'aborted' });
    await store.load('abort-1');
    expect(telemetry.spansOf('load')[1]!.attributes[A.retryOf]).toBeUndefined();
  });

  it('reads: messages read, the window asked, counts returned', async () => {
    await store.create({ id: 'attr-2', folder: '/f', messages: [user('a'), user('b'), user('c')] });
    telemetry.resetSpans();
    await store.load('attr-2');
    expect(only('load').attributes).toMatchObject({
      [A.messagesRead]: 3,
      [A.messageCount]: 3,
      [A.revision]: 1,
    });
    await store.loadMessages('attr-2', { last: 2 });
    expect(only('loadMessages').attributes).toMatchObject({
      [A.windowLast]: 2,
      [A.messagesRead]: 2,
    });
    await store.loadMessageWindow('attr-2', { offset: 1, limit: 5 });
    expect(only('loadMessageWindow').attributes).toMatchObject({
      [A.windowOffset]: 1,
      [A.windowLimit]: 5,
      [A.messagesRead]: 2,
      [A.messageCount]: 3,
      [A.revision]: 1,
    });
    await store.list({ folder: '/f', query: 'B', limit: 10 });
    expect(only('list').attributes).toMatchObject({
      [A.listOptions]: ['folder', 'query', 'limit'],
      [A.limit]: 10,
      [A.resultCount]: 1,
    });
  });

  it('status, events, router, pruning and repair: flags, numbers and bytes', async () => {
    await store.create({ id: 'attr-3' });
    telemetry.resetSpans();
    await store.loadRuntimeStatus('attr-3');
    expect(only('loadRuntimeStatus').attributes[A.statusFound]).toBe(false);
    const status = { phase: 'review', checks: [1, 2] };
    await store.saveRuntimeStatus('attr-3', status);
    expect(only('saveRuntimeStatus').attributes[A.requestBytes]).toBe(
      Buffer.byteLength(JSON.stringify(status)),
    );
    await store.append('attr-3', 'note', { text: 'é' });
    expect(only('append').attributes).toMatchObject({
      [A.eventSequence]: 1,
      [A.requestBytes]: Buffer.byteLength('{"text":"é"}'),
    });
    await store.events('attr-3', { afterSequence: 0, limit: 10 });
    expect(only('events').attributes).toMatchObject({
      [A.afterSequence]: 0,
      [A.limit]: 10,
      [A.resultCount]: 1,
    });
    await store.bind('telegram', 'chat', 'thread', 'attr-3');
    await store.resolve('telegram', 'chat', 'thread', '');
    expect(only('resolve').attributes[A.routerResolved]).toBe(true);
    await store.enforceMax(1);
    expect(only('enforceMax').attributes).toMatchObject({ [A.pruneMax]: 1 });
    expect(only('enforceMax').attributes[A.pruneDeleted]).toBeGreaterThan(0);
    await store.repair();
    expect(only('repair').attributes).toMatchObject({
      [A.repairRebuilt]: expect.any(Number),
      [A.repairSkipped]: 0,
      [A.repairFixed]: expect.any(Number),
    });
  });

  it('session ids only with sessionIds: true, and then only valid ids', async () => {
    const withIds = instrumentStore(new MemoryStore(), {
      ...telemetry.providers,
      sessionIds: true,
    });
    await withIds.create({ id: 'ids-1', messages: [user('a')] });
    const branch = await withIds.branch('ids-1', 1);
    expect(only('create').attributes[A.sessionId]).toBe('ids-1');
    expect(only('branch').attributes).toMatchObject({
      [A.sessionId]: 'ids-1',
      [A.resultSessionId]: branch.id,
    });
    await withIds.load('../etc/passwd').catch(() => {});
    expect(only('load').attributes[A.sessionId]).toBeUndefined();
    expect(only('load').attributes[A.errorType]).toBe('invalid_argument');
    telemetry.resetSpans();
    await store.create({ id: 'ids-2' });
    expect(only('create').attributes[A.sessionId]).toBeUndefined();
  });
});

describe('spans › context', () => {
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
  });
  afterAll(() => {
    manager.disable();
    context.disable();
  });

  it('a call is a child of the active span, and is the active span while the store works', async () => {
    let activeInside: Span | undefined;
    class ObservedStore extends MemoryStore {
      override async load(id: string) {
        activeInside = trace.getActiveSpan();
        return super.load(id);
      }
    }
    const store = instrumentStore(new ObservedStore(), telemetry.providers);
    await store.create({ id: 'ctx-1' });
    const tracer = telemetry.tracerProvider.getTracer('app');
    await tracer.startActiveSpan('handle turn', async (parent) => {
      await store.load('ctx-1');
      parent.end();
    });
    const load = only('load');
    const parent = telemetry.spans().find((s) => s.name === 'handle turn')!;
    expect(load.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(activeInside?.spanContext().spanId).toBe(load.spanContext().spanId);
  });
});

describe('spans › the input is the store’s to read', () => {
  /** Commit input whose fields are getters that count their reads. */
  function gettersInput() {
    const reads = { n: 0 };
    const input = {};
    for (const key of ['append', 'expectedRevision', 'operationId']) {
      Object.defineProperty(input, key, {
        enumerable: true,
        get: () => {
          reads.n++;
          return key === 'append' ? turn : undefined;
        },
      });
    }
    return { input, reads };
  }
  /** Commit input behind a proxy that counts every trap the engine calls. */
  function proxiedInput() {
    const reads = { n: 0 };
    const count = Object.fromEntries(
      ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf'].map((trap) => [
        trap,
        (...args: unknown[]) => {
          reads.n++;
          return (Reflect as unknown as Record<string, (...a: unknown[]) => unknown>)[trap]!(
            ...args,
          );
        },
      ]),
    );
    return { input: new Proxy({ append: turn }, count), reads };
  }

  it('no span, recording or not, reads an argument through a getter or a proxy', async () => {
    const plain = new MemoryStore();
    const dropped = instrumentStore(new MemoryStore(), {
      tracerProvider: new BasicTracerProvider({ sampler: new AlwaysOffSampler() }),
    });
    const recorded = instrumentStore(new MemoryStore(), telemetry.providers);
    for (const make of [gettersInput, proxiedInput]) {
      const counts: number[] = [];
      for (const store of [plain, dropped, recorded]) {
        const { id } = await store.create({ id: `lazy-${counts.length}-${make.name}` });
        const { input, reads } = make();
        await store.commit(id, input);
        expect((await store.load(id)).messages).toEqual(turn);
        counts.push(reads.n);
      }
      expect(counts[0], make.name).toBeGreaterThan(0);
      expect(counts, make.name).toEqual([counts[0], counts[0], counts[0]]);
    }
    // What sits behind a getter or a proxy is not measured.
    const commits = telemetry.spansOf('commit');
    expect(commits.map((s) => s.attributes[A.messagesWritten])).toEqual([0, 0]);
    expect(commits.map((s) => s.attributes[A.requestBytes])).toEqual([undefined, undefined]);
  });

  it('with no SDK at all the wrapper records nothing and the call still works', async () => {
    const store = instrumentStore(new MemoryStore());
    await store.create({ id: 'nosdk-1' });
    await commitTurn(store, 'nosdk-1', { append: turn });
    expect((await store.load('nosdk-1')).messages).toEqual(turn);
    expect(telemetry.spans()).toEqual([]);
  });
});

describe('spans › a failing SDK', () => {
  it('a span processor that throws changes neither results nor errors', async () => {
    /** A processor with a bug: it throws on every span that ends. */
    const throwing: SpanProcessor = {
      onStart: () => {},
      onEnd: () => {
        throw new Error('exporter bug');
      },
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const store = instrumentStore(new MemoryStore(), {
      tracerProvider: new BasicTracerProvider({ spanProcessors: [throwing] }),
    });
    const created = await store.create({ id: 'buggy-1', title: 't' });
    expect(created.title).toBe('t');
    const error = await store.load('missing-2').catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('not_found');
  });
});
