// One conformance run on instrumented stores of an adapter: the recording SDK, the
// wrapper with the run's options, openStore's adapter replaced by a wrapping one, the
// suite, and the audit of what the suite recorded.
import {
  type ConformanceInitializer,
  type ConformanceOptions,
  runConformance,
} from '@sessionkit/conformance';
import type { Store } from '@sessionkit/core';
import { registerStoreAdapter, type StoreAdapter } from '@sessionkit/core/adapter';
import { afterAll } from 'vitest';
import { instrumentStore } from '../../src/index.js';
import {
  instrumentedAdapter,
  instrumentedInitializer,
  type Wrap,
} from './instrumented-initializer.js';
import { auditConformanceRun } from './suite-audit.js';
import { RecordingTelemetry } from './telemetry.js';

/** What one run is of. */
export interface InstrumentedRun<S extends Store> {
  /** The adapter's own initializer (its probes, faults and cleanup). */
  initializer: ConformanceInitializer<S>;
  /** The adapter's `storeAdapter`, so that stores opened from URLs are instrumented too. */
  adapter: StoreAdapter;
  /** `sessionkit.store.kind` the spans must carry. */
  storeKind: string;
  sessionIds: boolean;
  /** The specs the adapter's own run selects (default: all). */
  specs?: ConformanceOptions['specs'];
}

/** Registers the suite and its audit in the calling test file. */
export function runInstrumentedConformance<S extends Store>(run: InstrumentedRun<S>): void {
  const telemetry = new RecordingTelemetry();
  afterAll(() => telemetry.shutdown());
  const wrap: Wrap = (store) =>
    instrumentStore(store, { ...telemetry.providers, sessionIds: run.sessionIds });
  registerStoreAdapter(instrumentedAdapter(run.adapter, wrap));
  const name = `otel › ${run.storeKind}`;
  runConformance(instrumentedInitializer(run.initializer, name, wrap), { specs: run.specs });
  auditConformanceRun(name, telemetry, { storeKind: run.storeKind, sessionIds: run.sessionIds });
}
