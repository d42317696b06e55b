export type { ConformanceTest, TestContext } from './harness.js';
export { formatReport } from './harness.js';
export { formatMatrix, matrixPassed } from './matrix.js';
export { runConformance, runConformanceSuite } from './run.js';
export { BAD_INPUT_CASE_COUNT } from './specs/bad-input.js';
export { ALL_SPECS } from './specs/index.js';
export type {
  CapabilitySummary,
  ConformanceInitializer,
  ConformanceOptions,
  ConformanceReport,
  ReportCapability,
  SpecName,
  TestResult,
  TestStatus,
} from './types.js';
export { SPEC_NAMES } from './types.js';
