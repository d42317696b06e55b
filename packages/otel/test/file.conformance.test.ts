// The whole conformance suite on an instrumented file store, with a recording SDK and
// session ids off (the default): no span may carry an id, nor anything the suite wrote.
import { runConformance } from '@sessionkit/conformance';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { storeAdapter } from '@sessionkit/file';
import { afterAll } from 'vitest';
import { fileInitializer } from '../../file/test/helpers.js';
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
const wrap: Wrap = (store) => instrumentStore(store, telemetry.providers);

registerStoreAdapter(instrumentedAdapter(storeAdapter, wrap));
runConformance(instrumentedInitializer(fileInitializer, 'otel › file', wrap));
auditConformanceRun('otel › file', telemetry, { storeKind: 'file', sessionIds: false });
