// Turns a conformance initializer into one whose stores are instrumented. The suite then
// talks to the wrappers only, while what it needs of the backend itself — a peer over the
// same data, body-read probes, damage for the Repairer spec, cleanup — reaches the store
// underneath, exactly as the adapter's own run gives it.
import type { ConformanceInitializer } from '@sessionkit/conformance';
import type { Store } from '@sessionkit/core';
import type { StoreAdapter } from '@sessionkit/core/adapter';

const ORIGINAL = Symbol('the instrumented store');

/** Wraps one store (`instrumentStore` with the run's options). */
export type Wrap = (store: Store) => Store;

/** The initializer of `base` with every store it makes wrapped by `wrap`. */
export function instrumentedInitializer<S extends Store>(
  base: ConformanceInitializer<S>,
  name: string,
  wrap: Wrap,
): ConformanceInitializer<Store> {
  // Hooks receive the store as the tests see it (the suite's own proxy around the
  // wrapper), so the original rides on the wrapper under a symbol the proxy passes on.
  const wrapped = (store: S): Store => {
    const w = wrap(store);
    Object.defineProperty(w, ORIGINAL, { value: store });
    return w;
  };
  const original = (w: Store): S => {
    const s = (w as unknown as Record<symbol, S | undefined>)[ORIGINAL];
    if (!s) throw new Error('not a store of this initializer');
    return s;
  };
  const out: ConformanceInitializer<Store> = {
    name,
    create: async () => wrapped(await base.create()),
  };
  const { createPeer, destroy, probes, faults } = base;
  if (createPeer) out.createPeer = async (w) => wrapped(await createPeer(original(w)));
  if (destroy) out.destroy = (w) => destroy(original(w));
  if (base.beforeAll) out.beforeAll = base.beforeAll;
  if (base.afterAll) out.afterAll = base.afterAll;
  if (base.openUrl) out.openUrl = base.openUrl;
  if (base.timeoutMs !== undefined) out.timeoutMs = base.timeoutMs;
  const reads = probes?.messageBodyReads;
  if (reads) out.probes = { messageBodyReads: (w) => reads(original(w)) };
  if (faults) {
    const { damageIndex, corruptSession, indexDamageKinds, corruptionKinds } = faults;
    out.faults = {};
    if (damageIndex) out.faults.damageIndex = (w, id, kind) => damageIndex(original(w), id, kind);
    if (corruptSession)
      out.faults.corruptSession = (w, id, kind) => corruptSession(original(w), id, kind);
    if (indexDamageKinds !== undefined) out.faults.indexDamageKinds = indexDamageKinds;
    if (corruptionKinds !== undefined) out.faults.corruptionKinds = corruptionKinds;
  }
  return out;
}

/**
 * `adapter` with the stores it opens wrapped: registered for its schemes, it makes the
 * open-store spec's `openStore(url)` hand out instrumented stores too.
 */
export function instrumentedAdapter(adapter: StoreAdapter, wrap: Wrap): StoreAdapter {
  return {
    schemes: adapter.schemes,
    open: async (url, options, source) => wrap(await adapter.open(url, options, source)),
  };
}
