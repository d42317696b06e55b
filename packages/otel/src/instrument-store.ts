// instrumentStore: a store whose every contract method is a span and a few measurements,
// and otherwise the same store. Arguments (trailing options included), results, errors,
// `this` and synchronous throws pass through untouched.

import {
  type Attributes,
  context,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { isStore, SessionKitError, type Store } from '@sessionkit/core';
import { INSTRUMENTATION_VERSION, StoreInstruments } from './instruments.js';
import {
  SPAN_ATTRIBUTES as A,
  INSTRUMENTATION_NAME,
  STORE_METHODS,
  type StoreMethodName,
} from './names.js';
import { OPERATIONS, type OperationReader, putId, resultSessionId } from './operations.js';
import { classifyFailure } from './outcome.js';
import { RETRIED_CODES, RetryTracker } from './retry-tracker.js';

/** Options of `instrumentStore`. Unknown keys are rejected with `invalid_argument`. */
export interface InstrumentStoreOptions {
  /**
   * Where spans go. Default: the global provider (`trace.getTracerProvider()`), through
   * OpenTelemetry's proxy, so an SDK registered after this call is still used.
   */
  tracerProvider?: TracerProvider | undefined;
  /**
   * Where metrics go. Default: the global provider at the time of this call
   * (`metrics.getMeterProvider()`): the metrics API has no proxy, so start the SDK first.
   */
  meterProvider?: MeterProvider | undefined;
  /**
   * `sessionkit.store.kind` on every span and metric, 1–64 characters. Default: the
   * store's class name without `Store`, lower case (`PostgresStore` → `postgres`), or
   * `unknown` when the class name does not end in `Store`.
   */
  storeKind?: string | undefined;
  /**
   * Record session ids (`sessionkit.session.id`, `sessionkit.result.session_id`) on spans.
   * Default `false`: ids can be personal data (a chat's id) and make traces searchable by
   * conversation. Ids are never put on metrics (one series per session would be unbounded).
   */
  sessionIds?: boolean | undefined;
}

/**
 * What `instrumentStore` returns for a store of type `S`: exactly the contract methods `S`
 * has (see `STORE_METHODS`), with the same signatures. Members that are not contract
 * methods (an adapter's `dir`, `stats`, `backend` …) stay on the original store.
 */
export type InstrumentedStore<S> = Pick<S, Extract<keyof S, StoreMethodName>>;

const OPTION_KEYS = new Set(['tracerProvider', 'meterProvider', 'storeKind', 'sessionIds']);
const SPAN_OPTIONS = { kind: SpanKind.INTERNAL };

function invalid(message: string): SessionKitError {
  return new SessionKitError('invalid_argument', `[sessionkit/otel] instrumentStore: ${message}`);
}

function checkOptions(options: unknown): InstrumentStoreOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object');
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!OPTION_KEYS.has(key)) throw invalid(`unknown option "${key.slice(0, 64)}"`);
  }
  if (o.tracerProvider !== undefined && typeof field(o.tracerProvider, 'getTracer') !== 'function')
    throw invalid('tracerProvider must have getTracer()');
  if (o.meterProvider !== undefined && typeof field(o.meterProvider, 'getMeter') !== 'function')
    throw invalid('meterProvider must have getMeter()');
  if (
    o.storeKind !== undefined &&
    (typeof o.storeKind !== 'string' || o.storeKind.length < 1 || o.storeKind.length > 64)
  )
    throw invalid('storeKind must be a string of 1–64 characters');
  if (o.sessionIds !== undefined && typeof o.sessionIds !== 'boolean')
    throw invalid('sessionIds must be a boolean');
  return o as InstrumentStoreOptions;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** `PostgresStore` → `postgres`; a class name that does not end in `Store` → `unknown`. */
export function deriveStoreKind(store: object): string {
  const name = (Object.getPrototypeOf(store) as { constructor?: { name?: unknown } } | null)
    ?.constructor?.name;
  const match = typeof name === 'string' ? /^([A-Za-z0-9]{1,58})Store$/.exec(name) : null;
  return match ? match[1]!.toLowerCase() : 'unknown';
}

/**
 * Wraps `store` so that every call of a contract method is a span `sessionkit.<method>`
 * (kind INTERNAL, the active span while the store works, so driver spans nest under it)
 * and is measured by the metrics of `METRIC_NAMES`. The result has exactly the contract
 * methods `store` has, so every capability guard (`isCommitter`, `isBrancher`,
 * `isHistoryReader`, …) and an optional method such as `loadMessageWindow` answer as for
 * `store`. Every argument is forwarded unchanged (trailing option arguments included),
 * with `store` as `this`; results and errors are the store's own; `close()` closes
 * `store`.
 *
 * Spans never carry message text, titles, folders, statuses, metadata values, router keys
 * or event contents, nor an error's message or stack (they can quote them): a failure is
 * recorded as its code. Session ids only with `sessionIds: true`. When a span is not
 * recording (no SDK, or sampled out) no attribute is computed.
 *
 * Throws `invalid_argument` when `store` is not a `Store` or an option is malformed.
 */
export function instrumentStore<S extends Store<unknown>>(
  store: S,
  options?: InstrumentStoreOptions,
): InstrumentedStore<S> {
  if (!isStore(store)) throw invalid('expected a sessionkit Store');
  const o = checkOptions(options);
  const instrumented = new InstrumentedCalls(store, o);
  const out: Record<string, unknown> = {};
  const methods = store as unknown as Record<string, unknown>;
  for (const method of STORE_METHODS) {
    if (typeof methods[method] === 'function') out[method] = instrumented.wrap(method);
  }
  return out as InstrumentedStore<S>;
}

/** The telemetry state of one instrumented store and the call path of its methods. */
class InstrumentedCalls {
  readonly #store: Record<string, (...args: unknown[]) => unknown>;
  readonly #tracer: Tracer;
  readonly #instruments: StoreInstruments;
  readonly #retries = new RetryTracker();
  readonly #storeKind: string;
  readonly #sessionIds: boolean;

  constructor(store: Store<unknown>, options: InstrumentStoreOptions) {
    this.#store = store as unknown as Record<string, (...args: unknown[]) => unknown>;
    this.#storeKind = options.storeKind ?? deriveStoreKind(store);
    this.#sessionIds = options.sessionIds === true;
    const tracerProvider = options.tracerProvider ?? trace.getTracerProvider();
    this.#tracer = tracerProvider.getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
    this.#instruments = new StoreInstruments(
      options.meterProvider ?? metrics.getMeterProvider(),
      this.#storeKind,
    );
  }

  /** The instrumented version of `method`. */
  wrap(method: StoreMethodName): (...args: unknown[]) => unknown {
    const call: Call = {
      method,
      spanName: `sessionkit.${method}`,
      reader: OPERATIONS[method],
      attributes: this.#instruments.attributesOf(method),
    };
    return (...args: unknown[]) => this.#run(call, args);
  }

  #run(call: Call, args: unknown[]): unknown {
    const span = this.#tracer.startSpan(call.spanName, SPAN_OPTIONS);
    const fn = this.#store[call.method]!;
    // No SDK at all: the span is the API's no-op one and no metric goes anywhere, so
    // nothing needs the outcome, and the store's own promise is handed back as it is.
    if (!this.#instruments.enabled && span.spanContext() === INVALID_SPAN_CONTEXT)
      return fn.apply(this.#store, args);
    const retryOf = this.#retries.hasPending
      ? this.#retries.take(call.method, sessionOf(call, args))
      : undefined;
    const started = this.#instruments.enabled ? performance.now() : 0;
    let result: unknown;
    try {
      result = hasContext(span)
        ? context.with(trace.setSpan(context.active(), span), fn, this.#store, ...args)
        : fn.apply(this.#store, args);
    } catch (error) {
      this.#failed(call, span, started, args, retryOf, error);
      throw error;
    }
    if (!isPromiseLike(result)) {
      this.#succeeded(call, span, started, args, retryOf, result);
      return result;
    }
    return result.then(
      (value) => {
        this.#succeeded(call, span, started, args, retryOf, value);
        return value;
      },
      (error: unknown) => {
        this.#failed(call, span, started, args, retryOf, error);
        throw error;
      },
    );
  }

  // Both ends below never throw: a failure of the telemetry (a broken exporter, a reader
  // meeting odd input) must not turn the store's answer into an error.

  #succeeded(
    call: Call,
    span: Span,
    started: number,
    args: unknown[],
    retryOf: string | undefined,
    value: unknown,
  ): void {
    try {
      const instruments = this.#instruments;
      if (instruments.enabled) {
        const sets = call.attributes;
        instruments.duration.record((performance.now() - started) / 1000, sets.ok);
        if (retryOf !== undefined) instruments.retries.add(1, sets.retried(retryOf));
        const written = messagesWritten(call, args);
        if (written > 0) instruments.messagesWritten.add(written, sets.ok);
      }
      if (span.isRecording()) {
        const out = this.#baseAttributes(call, args, retryOf);
        safely(() => call.reader.result?.(value, args, out));
        if (this.#sessionIds) putId(out, A.resultSessionId, resultSessionId(call.method, value));
        span.setAttributes(out);
      }
      span.end();
    } catch {
      // Dropped: see above.
    }
  }

  #failed(
    call: Call,
    span: Span,
    started: number,
    args: unknown[],
    retryOf: string | undefined,
    error: unknown,
  ): void {
    try {
      const failure = classifyFailure(error);
      const instruments = this.#instruments;
      if (instruments.enabled) {
        const sets = call.attributes;
        const seconds = (performance.now() - started) / 1000;
        instruments.duration.record(seconds, sets.failed(failure.type));
        if (failure.type === 'conflict') instruments.conflicts.add(1, sets.ok);
        if (failure.type === 'unavailable') instruments.unavailable.add(1, sets.ok);
        if (retryOf !== undefined) instruments.retries.add(1, sets.retried(retryOf));
      }
      if (RETRIED_CODES.has(failure.type))
        this.#retries.failed(call.method, sessionOf(call, args), failure.type);
      if (span.isRecording()) {
        const out = this.#baseAttributes(call, args, retryOf);
        out[A.errorType] = failure.type;
        out[A.retryable] = failure.retryable;
        span.setAttributes(out);
        // The code stands in for the message: a store's message can quote the caller's values.
        span.recordException({ name: failure.exceptionType, message: failure.type });
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure.type });
      }
      span.end();
    } catch {
      // Dropped: see above.
    }
  }

  /** The attributes every recording span of `call` has, and those read from its arguments. */
  #baseAttributes(call: Call, args: unknown[], retryOf: string | undefined): Attributes {
    const out: Attributes = { ...call.attributes.ok };
    if (retryOf !== undefined) out[A.retryOf] = retryOf;
    if (this.#sessionIds) putId(out, A.sessionId, sessionOf(call, args));
    safely(() => call.reader.request?.(args, out));
    return out;
  }
}

/** One wrapped method: what its span is called, how it is read, its metric attributes. */
interface Call {
  method: StoreMethodName;
  spanName: string;
  reader: OperationReader;
  attributes: ReturnType<StoreInstruments['attributesOf']>;
}

/**
 * True when `span` has a context worth making active for the store's own calls (driver
 * spans nest under it, a sampled-out decision reaches them). With no tracer SDK every
 * span is the API's invalid one: the identity check skips a context allocation per call.
 */
function hasContext(span: Span): boolean {
  const spanContext = span.spanContext();
  return spanContext !== INVALID_SPAN_CONTEXT && isSpanContextValid(spanContext);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** The session a call names, or `undefined` when its arguments cannot be read. */
function sessionOf(call: Call, args: unknown[]): unknown {
  return safely(() => call.reader.sessionId(args));
}

/** Messages a successful call wrote; 0 when its arguments cannot be read. */
function messagesWritten(call: Call, args: unknown[]): number {
  if (!call.reader.messagesWritten) return 0;
  try {
    return call.reader.messagesWritten(args);
  } catch {
    return 0;
  }
}

/**
 * Runs a reader of caller input (which may be bad input the store rejects, with getters
 * that throw): telemetry must never change what the call does, so its failure is dropped.
 */
function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
