// What every operation of a store works with.
import type { SessionWriteQueue } from '@sessionkit/core/adapter';
import type { ObjectIO } from './objects.js';
import type { SessionIndex } from './session-index.js';

/** The bucket access and the listing index of one store. */
export interface StoreContext {
  io: ObjectIO;
  index: SessionIndex;
  /**
   * This store's writes of a session, one at a time (`changeSession`): writers of one
   * process never race each other for a version, which would let the first answered win
   * every round and starve the rest; other processes still race, fairly.
   */
  sessionWrites: SessionWriteQueue;
  /**
   * The grace of superseded objects (`pruneGraceMs`): a version object is removed only
   * once the head has named a later one for longer than this, and a writer lands its
   * version within half of it after reading the head, or re-reads (see README "Storage").
   */
  pruneGraceMs: number;
}
