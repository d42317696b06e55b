// What every operation of a store works with.
import type { SessionWriteQueue } from '@sessionkit/core/adapter';
import type { FoldNotes } from './fold.js';
import type { KnownHeads } from './known-heads.js';
import type { ObjectIO } from './objects.js';
import type { OffPathWork } from './off-path.js';
import type { SessionIndex } from './session-index.js';
import type { WriteMarkers } from './write-markers.js';

/** The bucket access and the listing index of one store. */
export interface StoreContext {
  io: ObjectIO;
  index: SessionIndex;
  /** This store's write markers: one covers its writes of a session while they come. */
  markers: WriteMarkers;
  /**
   * The newest version of each session as this store's last write of it landed it: the
   * next write starts from it without reading the head (its `If-None-Match: *` fails if
   * another writer came between, and it then reads past it). Taken out by every write and
   * put back only by one that landed, so a failure never leaves a guess behind; the
   * least recently remembered are forgotten past `KNOWN_HEADS_LIMIT`.
   */
  knownHeads: KnownHeads;
  /**
   * Derived writes (search text) and storage upkeep (folds, removals) the store does not
   * wait for; `close()` does.
   */
  offPath: OffPathWork;
  /** The snapshots this store's folds wrote: its next write of a session starts on them. */
  folds: FoldNotes;
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
