// Which capabilities a `BaseStore` subclass has: those whose primitives it implements.
import type { ErrorFactory } from '../errors.js';

/** Each optional capability: its public methods and the primitives that implement them. */
export const CAPABILITY_PRIMITIVES = [
  { capability: 'Committer', methods: ['commit'], primitives: ['writeCommit'] },
  {
    capability: 'Brancher',
    methods: ['branch', 'clone', 'merge'],
    primitives: ['writeBranch', 'writeClone', 'writeMerge'],
  },
  {
    capability: 'HistoryReader',
    methods: ['loadMessages', 'loadMessageWindow'],
    primitives: ['readWindow'],
  },
  {
    capability: 'RuntimeStatusStore',
    methods: ['saveRuntimeStatus', 'loadRuntimeStatus'],
    primitives: ['writeRuntimeStatus', 'readRuntimeStatus'],
  },
  {
    capability: 'SessionRouter',
    methods: ['bind', 'resolve', 'unbind', 'follow', 'touch', 'recent'],
    primitives: [
      'writeBinding',
      'readRoute',
      'removeBinding',
      'writeFollow',
      'touchBinding',
      'readRecentBindings',
    ],
  },
  {
    capability: 'EventLog',
    methods: ['append', 'events'],
    primitives: ['appendEvent', 'readEvents'],
  },
  { capability: 'Pruner', methods: ['enforceMax'], primitives: ['pruneRoots'] },
  { capability: 'Repairer', methods: ['repair'], primitives: ['repairStore'] },
] as const;

/**
 * Makes the public methods of every capability whose primitives `store` does not override
 * (they are still `base`'s) read as `undefined` on the instance, so the capability guards
 * say it is absent. Throws `invalid_argument` when a subclass overrides only some of a
 * capability's primitives: half a capability cannot keep its contract.
 */
export function hideAbsentCapabilities(store: object, base: object, errors: ErrorFactory): void {
  const own = store as Record<string, unknown>;
  const inherited = base as Record<string, unknown>;
  for (const { capability, methods, primitives } of CAPABILITY_PRIMITIVES) {
    const implemented = primitives.filter((p) => own[p] !== inherited[p]);
    if (implemented.length === primitives.length) continue;
    if (implemented.length > 0) {
      const missing = primitives.filter((p) => own[p] === inherited[p]);
      throw errors.invalid(
        `${store.constructor.name}: ${capability} needs every one of its primitives; missing ${missing.join(', ')}`,
      );
    }
    for (const method of methods) {
      Object.defineProperty(store, method, {
        value: undefined,
        enumerable: false,
        writable: false,
        configurable: true,
      });
    }
  }
}
