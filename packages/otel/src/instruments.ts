// The metric instruments of one instrumented store, and the attribute sets they record
// with. Attribute sets are built once per method and outcome and reused, so a call
// allocates none for its metrics.
import { createRequire } from 'node:module';
import {
  type Attributes,
  type Counter,
  createNoopMeter,
  type Histogram,
  type Meter,
  type MeterProvider,
  ValueType,
} from '@opentelemetry/api';
import { SPAN_ATTRIBUTES as A, INSTRUMENTATION_NAME, METRIC_NAMES } from './names.js';

/** This package's version, reported as the instrumentation scope's version. */
export const INSTRUMENTATION_VERSION = (
  createRequire(import.meta.url)('../package.json') as { version: string }
).version;

/**
 * Bucket boundaries of the duration histogram, in seconds: from a memory-store call
 * (tens of microseconds) to a slow network store (seconds). The SDK's default boundaries
 * start at 5 (seconds, here), which would put every call in the first bucket.
 */
export const DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

// The API's no-op meter, what `metrics.getMeterProvider()` hands out while no SDK is
// registered. Its class is not exported; an instance of it shows which one it is.
const NoopMeter = createNoopMeter().constructor;

/** True when `meter` is the API's no-op meter: nothing recorded would go anywhere. */
export function isNoopMeter(meter: Meter): boolean {
  return meter instanceof NoopMeter;
}

/** The attribute sets of one method: success, and one per code (each made on first use). */
class MethodAttributes {
  readonly ok: Attributes;
  readonly #failed = new Map<string, Attributes>();
  readonly #retried = new Map<string, Attributes>();

  constructor(operation: string, storeKind: string) {
    this.ok = { [A.operation]: operation, [A.storeKind]: storeKind };
  }

  /** The set of a call that failed with `type` (`error.type`). */
  failed(type: string): Attributes {
    return this.#with(this.#failed, A.errorType, type);
  }

  /** The set of a retry of a call that failed with `code`. */
  retried(code: string): Attributes {
    return this.#with(this.#retried, A.retryOf, code);
  }

  /** `ok` plus `key: value`, kept in `sets` so each combination is built once. */
  #with(sets: Map<string, Attributes>, key: string, value: string): Attributes {
    let set = sets.get(value);
    if (!set) {
      set = { ...this.ok, [key]: value };
      sets.set(value, set);
    }
    return set;
  }
}

/** The instruments of one instrumented store. */
export class StoreInstruments {
  readonly duration: Histogram;
  readonly conflicts: Counter;
  readonly unavailable: Counter;
  readonly retries: Counter;
  readonly messagesWritten: Counter;
  /**
   * False when the meter is the API's no-op one: callers then skip the clock reads and
   * the recording calls, which would measure for nobody.
   */
  readonly enabled: boolean;

  constructor(
    meterProvider: MeterProvider,
    private readonly storeKind: string,
  ) {
    const meter = meterProvider.getMeter(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
    this.enabled = !isNoopMeter(meter);
    this.duration = meter.createHistogram(METRIC_NAMES.duration, {
      description: 'Duration of sessionkit store calls, by operation and outcome.',
      unit: 's',
      valueType: ValueType.DOUBLE,
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    const counter = (name: string, description: string, unit: string) =>
      meter.createCounter(name, { description, unit, valueType: ValueType.INT });
    this.conflicts = counter(
      METRIC_NAMES.conflicts,
      'Store calls that failed with conflict (the session changed since the expected revision or count).',
      '{call}',
    );
    this.unavailable = counter(
      METRIC_NAMES.unavailable,
      'Store calls that failed with unavailable (the backend could not be reached).',
      '{call}',
    );
    this.retries = counter(
      METRIC_NAMES.retries,
      'Store calls that repeat a call of the same operation and session that failed with conflict or unavailable.',
      '{call}',
    );
    this.messagesWritten = counter(
      METRIC_NAMES.messagesWritten,
      'Messages handed to the store by successful create, save and commit calls.',
      '{message}',
    );
  }

  /** The attribute sets of `operation` (one per wrapped method, made when it is wrapped). */
  attributesOf(operation: string): MethodAttributes {
    return new MethodAttributes(operation, this.storeKind);
  }
}
