// What every operation of a store works with.
import type { ObjectIO } from './objects.js';
import type { SessionIndex } from './session-index.js';

/** The bucket access and the listing index of one store. */
export interface StoreContext {
  io: ObjectIO;
  index: SessionIndex;
}
