// The conformance suite on an instrumented file store — the specs the adapter's own run
// selects — with a recording SDK and session ids off (the default): no span may carry an
// id, nor anything the suite wrote.
import { storeAdapter } from '@sessionkit/file';
import { fileConformanceSpecs, fileInitializer } from '../../file/test/helpers.js';
import { runInstrumentedConformance } from './support/instrumented-run.js';

runInstrumentedConformance({
  initializer: fileInitializer,
  adapter: storeAdapter,
  storeKind: 'file',
  sessionIds: false,
  specs: fileConformanceSpecs,
});
