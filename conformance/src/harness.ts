import { randomBytes } from 'node:crypto';
import { CAPABILITIES, type Capability, detectCapabilities, type Store } from '@sessionkit/core';
import type {
  CapabilitySummary,
  ConformanceInitializer,
  ConformanceReport,
  ReportCapability,
  SpecName,
  TestResult,
  TestStatus,
} from './types.js';
import { SPEC_NAMES } from './types.js';
import { WriteWatch, watchedInitializer } from './write-watch.js';

/** Thrown inside a test to record it as skipped with a reason (a probe or fault hook is missing). */
export class SkipTest extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'SkipTest';
  }
}

/** What a test body receives. */
export interface TestContext {
  /** A fresh store from `create()`. */
  store: Store;
  /** The initializer under test. */
  init: ConformanceInitializer;
  /**
   * A second instance over the same data when the initializer has `createPeer`,
   * otherwise the same store. Created on first call; closed after the test.
   */
  peer(): Promise<Store>;
  /** True when `peer()` returns a distinct instance. */
  hasPeer: boolean;
  /** A fresh unique session id (random, so tests never collide). */
  id(prefix?: string): string;
  /** A fresh unique folder name, so listing tests see only their own sessions. */
  folder(): string;
  /** Records the test as skipped with `reason`. */
  skip(reason: string): never;
}

/** One conformance test: which spec file it belongs to and which capability it proves. */
export interface ConformanceTest {
  spec: SpecName;
  capability: ReportCapability;
  /** Further capabilities the test needs; without them it is skipped, not failed. */
  requires: readonly Capability[];
  name: string;
  /** Multiplies the initializer's timeout (heavy tests). */
  timeoutFactor: number;
  run(ctx: TestContext): Promise<void>;
}

/** Per-test options. */
export interface TestOptions {
  requires?: readonly Capability[];
  timeoutFactor?: number;
}

/** Builds the test list of one spec file. */
export function defineSpec(
  spec: SpecName,
  capability: ReportCapability,
  body: (t: {
    test(name: string, run: (ctx: TestContext) => Promise<void>, options?: TestOptions): void;
    /** A test proving another capability than the spec's default. */
    testFor(
      capability: ReportCapability,
      name: string,
      run: (ctx: TestContext) => Promise<void>,
      options?: TestOptions,
    ): void;
  }) => void,
): ConformanceTest[] {
  const tests: ConformanceTest[] = [];
  const add = (
    cap: ReportCapability,
    name: string,
    run: (ctx: TestContext) => Promise<void>,
    o: TestOptions = {},
  ) => {
    if (tests.some((t) => t.name === name))
      throw new Error(`duplicate conformance test name in ${spec}: ${name}`);
    tests.push({
      spec,
      capability: cap,
      requires: o.requires ?? [],
      name,
      timeoutFactor: o.timeoutFactor ?? 1,
      run,
    });
  };
  body({ test: (name, run, o) => add(capability, name, run, o), testFor: add });
  return tests;
}

/** Throws a clear error when the initializer is malformed. */
export function validateInitializer(init: unknown): void {
  const where = '@sessionkit/conformance: the initializer';
  if (typeof init !== 'object' || init === null)
    throw new TypeError(`${where} must be an object, got ${String(init)}`);
  const i = init as Record<string, unknown>;
  if (typeof i.name !== 'string' || i.name === '')
    throw new TypeError(`${where} needs a non-empty "name" string`);
  if (typeof i.create !== 'function')
    throw new TypeError(`${where} needs a "create()" function returning a new store`);
  for (const key of ['createPeer', 'destroy', 'beforeAll', 'afterAll'] as const) {
    if (i[key] !== undefined && typeof i[key] !== 'function')
      throw new TypeError(`${where}: "${key}" must be a function`);
  }
  if (i.timeoutMs !== undefined && (typeof i.timeoutMs !== 'number' || !(i.timeoutMs > 0))) {
    throw new TypeError(`${where}: "timeoutMs" must be a positive number`);
  }
  validateFaults(where, i.faults);
  if (i.openUrl !== undefined && typeof i.openUrl !== 'function')
    throw new TypeError(`${where}: "openUrl" must be a function returning a store URL`);
  const known = [
    'name',
    'create',
    'createPeer',
    'destroy',
    'beforeAll',
    'afterAll',
    'timeoutMs',
    'probes',
    'faults',
    'openUrl',
  ];
  for (const key of Object.keys(i)) {
    if (!known.includes(key))
      throw new TypeError(`${where} has an unknown key "${key}" (known: ${known.join(', ')})`);
  }
}

function validateFaults(where: string, faults: unknown): void {
  if (faults === undefined) return;
  if (typeof faults !== 'object' || faults === null)
    throw new TypeError(`${where}: "faults" must be an object`);
  const f = faults as Record<string, unknown>;
  for (const key of ['damageIndex', 'corruptSession']) {
    if (f[key] !== undefined && typeof f[key] !== 'function')
      throw new TypeError(`${where}: "faults.${key}" must be a function`);
  }
  for (const key of ['indexDamageKinds', 'corruptionKinds']) {
    const n = f[key];
    if (n !== undefined && (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1))
      throw new TypeError(`${where}: "faults.${key}" must be a positive integer, got ${String(n)}`);
  }
}

/** The capabilities of a test the store lacks. */
export function missingCapabilities(store: Store, test: ConformanceTest): Capability[] {
  const have = new Set<string>(detectCapabilities(store));
  const needed = [test.capability, ...test.requires].filter((c): c is Capability => c !== 'Store');
  return needed.filter((c) => !have.has(c));
}

/**
 * Runs one test with a fresh store: creates it, runs the body, closes every instance,
 * destroys the data. Returns the outcome; never throws.
 */
export async function executeTest(
  init: ConformanceInitializer,
  test: ConformanceTest,
): Promise<TestResult> {
  const base = { spec: test.spec, capability: test.capability, name: test.name };
  let store: Store | undefined;
  const peers: Store[] = [];
  try {
    store = await init.create();
    const missing = missingCapabilities(store, test);
    if (missing.length > 0) {
      const primary =
        test.capability !== 'Store' && missing.includes(test.capability as Capability);
      return {
        ...base,
        status: primary ? 'not implemented' : 'skipped',
        detail: `store does not implement ${missing.join(', ')}`,
      };
    }
    const s = store;
    // Every write of the test, through the store or a peer, is followed by the listing
    // invariant check (see write-watch.ts).
    const watch = new WriteWatch(init.probes?.messageBodyReads);
    const watched = watch.wrap(s);
    let peer: Store | undefined;
    const ctx: TestContext = {
      store: watched,
      init: watchedInitializer(init, watch),
      hasPeer: typeof init.createPeer === 'function',
      peer: async () => {
        if (!init.createPeer) return watched;
        if (!peer) {
          const raw = await init.createPeer(s);
          peers.push(raw);
          peer = watch.wrap(raw);
        }
        return peer;
      },
      id: (prefix = 's') => `${prefix}-${randomBytes(8).toString('hex')}`,
      folder: () => `/conformance/${randomBytes(6).toString('hex')}`,
      skip: (reason: string) => {
        throw new SkipTest(reason);
      },
    };
    const timeout = (init.timeoutMs ?? 30_000) * test.timeoutFactor;
    await withTimeout(test.run(ctx), timeout, test.name);
    return { ...base, status: 'passed' };
  } catch (e) {
    if (e instanceof SkipTest) return { ...base, status: 'skipped', detail: e.message };
    return { ...base, status: 'failed', detail: describeError(e) };
  } finally {
    for (const p of peers) await p.close().catch(() => {});
    if (store) {
      await store.close().catch(() => {});
      if (init.destroy) await Promise.resolve(init.destroy(store)).catch(() => {});
    }
  }
}

function describeError(e: unknown): string {
  // Long enough for a model-based failure: its seed, first mismatch and shrunk sequence.
  if (e instanceof Error) return `${e.name}: ${e.message}`.slice(0, 6000);
  return String(e).slice(0, 6000);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`test "${name}" timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** An empty report for `adapter`. */
export function newReport(adapter: string): ConformanceReport {
  const caps = ['Store', ...CAPABILITIES] as ReportCapability[];
  const capabilities = Object.fromEntries(
    caps.map((c) => [
      c,
      { status: 'not run', passed: 0, failed: 0, skipped: 0, notImplemented: 0 },
    ]),
  ) as Record<ReportCapability, CapabilitySummary>;
  const specs = Object.fromEntries(
    SPEC_NAMES.map((s) => [s, { passed: 0, failed: 0, skipped: 0, notImplemented: 0 }]),
  ) as ConformanceReport['specs'];
  const label = process.env.SESSIONKIT_CONFORMANCE_LABEL?.trim() || undefined;
  return {
    adapter,
    runtime: { node: process.versions.node, ...(label ? { label } : {}) },
    startedAt: new Date().toISOString(),
    capabilities,
    specs,
    tests: [],
  };
}

const COUNTER: Record<TestStatus, 'passed' | 'failed' | 'skipped' | 'notImplemented'> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  'not implemented': 'notImplemented',
};

/** Adds one outcome to the report and recomputes the capability's status. */
export function recordResult(report: ConformanceReport, result: TestResult): void {
  report.tests.push(result);
  const key = COUNTER[result.status];
  report.specs[result.spec][key] += 1;
  const cap = report.capabilities[result.capability];
  cap[key] += 1;
  if (cap.failed > 0) cap.status = 'failed';
  else if (cap.passed > 0) cap.status = 'passed';
  else if (cap.notImplemented > 0) cap.status = 'not implemented';
}

/** The report as an aligned text table, capability → status. */
export function formatReport(report: ConformanceReport): string {
  const lines = [`sessionkit conformance report: ${report.adapter}`];
  for (const [cap, s] of Object.entries(report.capabilities)) {
    const counts = `${s.passed} passed, ${s.failed} failed${s.skipped ? `, ${s.skipped} skipped` : ''}`;
    lines.push(
      `  ${cap.padEnd(20)} ${s.status.padEnd(16)} ${s.status === 'not implemented' ? '' : counts}`,
    );
  }
  const failed = report.tests.filter((t) => t.status === 'failed');
  for (const t of failed) lines.push(`  ✗ [${t.spec}] ${t.name}: ${t.detail ?? ''}`);
  const skipped = report.tests.filter((t) => t.status === 'skipped');
  for (const t of skipped) lines.push(`  - skipped [${t.spec}] ${t.name}: ${t.detail ?? ''}`);
  return lines.join('\n');
}
