import type { Capability, Store } from '@sessionkit/core';

/** What the report groups results by: the base contract or one optional capability. */
export type ReportCapability = 'Store' | Capability;

/**
 * How the suite gets stores to test. Validated at runtime with a clear message.
 *
 * Every `create()` must return a store over EMPTY data (a fresh schema, folder, key
 * prefix …): tests such as `enforceMax` act on the whole store.
 */
export interface ConformanceInitializer<S extends Store = Store> {
  /** Shown in test names and the report, e.g. `"postgres"`. */
  name: string;
  /** A new store over fresh, empty data. Called once per test. */
  create(): Promise<S> | S;
  /**
   * A second store instance over the same data as `store` (another connection pool,
   * another process's view). When present, the concurrency specs race writers across
   * both instances. The suite closes it.
   */
  createPeer?(store: S): Promise<S> | S;
  /**
   * A store URL for core's `openStore`, naming fresh, empty data that every store opened
   * from the same URL shares (`memory:NAME`, `file:/tmp/x`, a database with a fresh schema).
   * The adapter must be registered (importing it usually does). Enables the open-store spec.
   */
  openUrl?(): string | Promise<string>;
  /** Called after each test with the store from `create()` (already closed): drop its data. */
  destroy?(store: S): Promise<void> | void;
  /** Once before the suite (start servers, create databases). */
  beforeAll?(): Promise<void> | void;
  /** Once after the suite. */
  afterAll?(): Promise<void> | void;
  /** Timeout of one ordinary test in ms. Default 30 000; heavy tests get 4×. */
  timeoutMs?: number;
  /**
   * Reads of the backend that the contract cannot express. Tests that need a probe the
   * initializer lacks are reported as skipped (with the reason), never as passed.
   */
  probes?: {
    /** A counter that grows every time the store reads message bodies of any session. */
    messageBodyReads?(store: S): number | Promise<number>;
  };
  /**
   * Ways to damage a store's derived data, for the Repairer spec. Each is optional.
   */
  faults?: {
    /** Make the listing index of `id` wrong or missing (the authoritative data stays). */
    damageIndex?(store: S, id: string, kind: number): Promise<void> | void;
    /**
     * How many distinct kinds of index damage `damageIndex` can do (a stale entry, a missing
     * one, a wrong parent–child link …), called with `kind` 0 … n − 1; the Repairer spec
     * repairs each. Default 1. The damaged session has a parent and a child of its own.
     */
    indexDamageKinds?: number;
    /** Make the authoritative data of `id` unreadable. */
    corruptSession?(store: S, id: string, kind: number): Promise<void> | void;
    /**
     * How many distinct ways `corruptSession` can make a session unreadable (a torn header,
     * a wrong type, a bad date …), called with `kind` 0 … n − 1; the Repairer spec meets
     * each one. Default 1.
     */
    corruptionKinds?: number;
  };
}

/** Options of `runConformance` / `runConformanceSuite`. */
export interface ConformanceOptions {
  /** Write the JSON report here when the run ends. Default: `$SESSIONKIT_CONFORMANCE_REPORT`. */
  reportFile?: string | undefined;
  /** Only these spec files (e.g. `["store", "brancher"]`). Default: all. */
  specs?: readonly SpecName[] | undefined;
  /** Print the capability table when the run ends. Default true. */
  printReport?: boolean | undefined;
}

/** The spec files of the suite, one per contract plus bad input and concurrency. */
export const SPEC_NAMES = [
  'store',
  'committer',
  'brancher',
  'history-reader',
  'runtime-status',
  'session-router',
  'event-log',
  'pruner',
  'repairer',
  'bad-input',
  'concurrency',
  'merge',
  'value-limits',
  'search',
  'message-window',
  'model',
  'open-store',
  'operations',
  'truncate',
  'signal',
  'input',
] as const;

export type SpecName = (typeof SPEC_NAMES)[number];

export type TestStatus = 'passed' | 'failed' | 'not implemented' | 'skipped';

/** One test's outcome. */
export interface TestResult {
  spec: SpecName;
  capability: ReportCapability;
  name: string;
  status: TestStatus;
  /** Failure message, or why it was skipped / which capability is missing. */
  detail?: string | undefined;
}

/** Per capability: passed when every test passed, failed when any failed. */
export interface CapabilitySummary {
  status: 'passed' | 'failed' | 'not implemented' | 'not run';
  passed: number;
  failed: number;
  skipped: number;
  notImplemented: number;
}

/** The end-of-run report, also written as JSON. */
export interface ConformanceReport {
  adapter: string;
  /**
   * Where the run happened, for matrices that put several runs side by side: the Node
   * version, and a free label (`SESSIONKIT_CONFORMANCE_LABEL`, e.g. "postgres 16").
   */
  runtime?: { node: string; label?: string | undefined } | undefined;
  startedAt: string;
  finishedAt?: string | undefined;
  capabilities: Record<ReportCapability, CapabilitySummary>;
  specs: Record<
    SpecName,
    { passed: number; failed: number; skipped: number; notImplemented: number }
  >;
  tests: TestResult[];
}
