import { runConformance } from '@sessionkit/conformance';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { storeAdapter } from '../src/index.js';
import { fileConformanceSpecs, fileInitializer } from './helpers.js';

// openStore finds file: URLs itself (the built package); registering the source's adapter
// makes the open-store spec test this code.
registerStoreAdapter(storeAdapter);

runConformance(fileInitializer, { specs: fileConformanceSpecs });
