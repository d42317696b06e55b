// @sessionkit/otel under the OpenTelemetry SDK for Node: a file store whose every call is a
// span and a few measurements, printed by the SDK's console exporters. Spans and metrics
// carry counts, sizes and error codes, never what the conversation says.
//
//   node src/main.js            (sessions in a fresh temp folder, or $SESSIONKIT_EXAMPLE_DIR)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { commitTurn, isSessionKitError, newSession } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import { instrumentStore } from '@sessionkit/otel';

// 1. The SDK first: instrumentStore takes the global providers as they are when it runs.
const resource = resourceFromAttributes({ 'service.name': 'sessionkit-example' });
const tracerProvider = new NodeTracerProvider({
  resource,
  // Simple (not batched) so the spans print as they end; an OTLP exporter in production.
  spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())],
});
tracerProvider.register(); // the global tracer provider and an AsyncLocalStorage context
const meterProvider = new MeterProvider({
  resource,
  // Printed once, at shutdown, for this short run.
  readers: [
    new PeriodicExportingMetricReader({
      exporter: new ConsoleMetricExporter(),
      exportIntervalMillis: 60_000,
    }),
  ],
});
metrics.setGlobalMeterProvider(meterProvider);

// 2. Any store, instrumented: it keeps every capability of the file store.
const dir =
  process.env.SESSIONKIT_EXAMPLE_DIR ?? join(mkdtempSync(join(tmpdir(), 'sk-otel-')), 'sessions');
const store = instrumentStore(new FileStore({ dir }));

// 3. One chat turn inside the application's own span: the store's spans are its children.
const tracer = trace.getTracer('chat-app');
const session = await store.create(newSession({ folder: '/work/parser', title: 'Comments' }));
await tracer.startActiveSpan('chat turn', async (turn) => {
  await commitTurn(store, session.id, {
    append: [
      { role: 'user', content: 'Why does the parser drop comments?' },
      { role: 'assistant', content: 'The lexer skips them.' },
    ],
    increment: { turnCount: 1 },
  });
  await store.loadMessages(session.id, { last: 2 });
  turn.end();
});

// 4. A writer holding an old revision is refused: a `conflict` span and a conflict count.
try {
  await store.commit(session.id, { expectedRevision: 1, append: [] });
} catch (e) {
  if (!isSessionKitError(e, 'conflict')) throw e;
}
await store.list({ folder: '/work/parser' });
await store.close();

// 5. Shutting the providers down flushes them: the metrics print last.
await tracerProvider.shutdown();
await meterProvider.shutdown();
