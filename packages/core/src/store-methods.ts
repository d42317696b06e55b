// The names of the store contracts' methods, listed once: wrappers (instrumentation, test
// doubles) walk this list, and errors and hooks name operations from it.
import type { FullStore } from './contracts.js';

/**
 * Every method of sessionkit's store contracts (`Store` and every optional capability,
 * `loadMessageWindow` included), in the order the contracts declare them. A wrapper that
 * forwards each of these forwards the whole contract.
 */
export const STORE_METHODS = [
  'create',
  'load',
  'save',
  'delete',
  'list',
  'close',
  'commit',
  'branch',
  'clone',
  'merge',
  'loadMessages',
  'loadMessageWindow',
  'saveRuntimeStatus',
  'loadRuntimeStatus',
  'bind',
  'resolve',
  'unbind',
  'follow',
  'touch',
  'recent',
  'append',
  'events',
  'enforceMax',
  'repair',
] as const;

/** One method of the store contracts. */
export type StoreMethodName = (typeof STORE_METHODS)[number];

// The build fails when the contracts gain a method this list lacks (a wrapper would drop
// it, and a capability guard would answer otherwise) or lose one it still names.
type UnknownMethods = Exclude<keyof FullStore, StoreMethodName>;
type StaleMethods = Exclude<StoreMethodName, keyof FullStore>;
const contractsKnown: [UnknownMethods | StaleMethods] extends [never] ? true : never = true;
void contractsKnown;
