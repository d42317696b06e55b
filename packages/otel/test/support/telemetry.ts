// A recording OpenTelemetry SDK for the tests: spans into the SDK's in-memory exporter,
// metrics through a periodic reader (flushed on demand) into its in-memory exporter.
import {
  AggregationTemporality,
  type DataPoint,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** The recording SDK of one test file, and ways to read what it recorded. */
export class RecordingTelemetry {
  readonly spanExporter = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.spanExporter)],
  });
  readonly #metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Never on its own schedule: the tests flush when they read.
  readonly #reader = new PeriodicExportingMetricReader({
    exporter: this.#metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  readonly meterProvider = new MeterProvider({ readers: [this.#reader] });

  /** The providers, as `instrumentStore` options. */
  get providers() {
    return { tracerProvider: this.tracerProvider, meterProvider: this.meterProvider };
  }

  /** Ended spans so far. */
  spans(): ReadableSpan[] {
    return this.spanExporter.getFinishedSpans();
  }

  /** Spans named `sessionkit.<method>`. */
  spansOf(method: string): ReadableSpan[] {
    return this.spans().filter((s) => s.name === `sessionkit.${method}`);
  }

  /** Every metric as it stands now (cumulative since the providers were made), by name. */
  async metrics(): Promise<Map<string, MetricData>> {
    await this.#reader.forceFlush();
    const exports = this.#metricExporter.getMetrics();
    const latest = exports[exports.length - 1];
    const out = new Map<string, MetricData>();
    for (const scope of latest?.scopeMetrics ?? []) {
      for (const metric of scope.metrics) out.set(metric.descriptor.name, metric);
    }
    return out;
  }

  /** The data points of metric `name` (none when it was never recorded). */
  async points(name: string): Promise<DataPoint<unknown>[]> {
    return ((await this.metrics()).get(name)?.dataPoints ?? []) as DataPoint<unknown>[];
  }

  /** Sum of the values of counter `name` over the points whose attributes include `where`. */
  async total(name: string, where: Record<string, unknown> = {}): Promise<number> {
    let sum = 0;
    for (const p of await this.points(name)) {
      if (Object.entries(where).every(([k, v]) => p.attributes[k] === v)) sum += p.value as number;
    }
    return sum;
  }

  /** Forgets the spans recorded so far (metrics are cumulative and stay). */
  resetSpans(): void {
    this.spanExporter.reset();
  }

  async shutdown(): Promise<void> {
    await this.tracerProvider.shutdown();
    await this.meterProvider.shutdown();
  }
}
