import { runConformance } from '@sessionkit/conformance';
import { fileInitializer } from './helpers.js';

runConformance(fileInitializer);
