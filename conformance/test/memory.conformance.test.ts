// The reference adapter runs the whole suite here rather than in packages/memory: the
// suite's own tests use the memory adapter (broken variants), and a package cycle would
// break the build graph.
import { runConformance } from '../src/index.js';
import { memoryInitializer } from './memory-initializer.js';

runConformance(memoryInitializer);
