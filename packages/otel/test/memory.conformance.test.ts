// The whole conformance suite on an instrumented memory store, with a recording SDK and
// session ids on: the wrapper changes nothing the suite can see, and every span it made
// keeps to the leak vocabulary.
import { runConformance } from '@sessionkit/conformance';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { storeAdapter } from '@sessionkit/memory';
import { afterAll } from 'vitest';
import { memoryInitializer } from '../../../conformance/test/memory-initializer.js';
import { instrumentStore } from '../src/index.js';
import {
  instrumentedAdapter,
  instrumentedInitializer,
  type Wrap,
} from './support/instrumented-initializer.js';
import { auditConformanceRun } from './support/suite-audit.js';
import { RecordingTelemetry } from './support/telemetry.js';

const telemetry = new RecordingTelemetry();
afterAll(() => telemetry.shutdown());
const wrap: Wrap = (store) => instrumentStore(store, { ...telemetry.providers, sessionIds: true });

registerStoreAdapter(instrumentedAdapter(storeAdapter, wrap));
runConformance(instrumentedInitializer(memoryInitializer, 'otel › memory', wrap));
auditConformanceRun('otel › memory', telemetry, { storeKind: 'memory', sessionIds: true });
