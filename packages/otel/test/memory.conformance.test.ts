// The whole conformance suite on an instrumented memory store, with a recording SDK and
// session ids on: the wrapper changes nothing the suite can see, and every span it made
// keeps to the leak vocabulary.
import { storeAdapter } from '@sessionkit/memory';
import { memoryInitializer } from '../../../conformance/test/memory-initializer.js';
import { runInstrumentedConformance } from './support/instrumented-run.js';

runInstrumentedConformance({
  initializer: memoryInitializer,
  adapter: storeAdapter,
  storeKind: 'memory',
  sessionIds: true,
});
