// What a writer and a lister know of a session without its messages (its tip), as a type
// of its own: the parts that cache tips and the parts that read them share it without
// importing each other.

import type { HistoryLineage, OperationLog } from '@sessionkit/core/adapter';
import type { HeaderJson } from '../format/records.js';

/** What a writer needs of a session without reading its messages. */
export interface SessionTip {
  header: HeaderJson;
  /** Merge lineage (core's `HistoryLineage`) after the last record. */
  lineage: HistoryLineage;
  messageCount: number;
  snapRev: number;
  /** The snapshot has a message-offset table (format 3): windows need not read it whole. */
  tabled: boolean;
  /** Inode of the snapshot file (a deleted and re-created session gets a new one). */
  snapIno: number;
  snapBytes: number;
  /** Inode of the commit log, 0 when there is none. */
  logIno: number;
  /** End of the last good record of the log. */
  logSize: number;
  /** Bytes actually in the log file (> logSize when it ends in a torn append). */
  logFileSize: number;
  logRecords: number;
  /**
   * The last log record's body was checked (a writer's read, or this store wrote it).
   * Readers take the last record from its prefix and meta alone; a writer trusts only a
   * verified tip, so it never appends after a record a power loss left half-written.
   */
  verified: boolean;
  /**
   * The lease epoch (`LeaseTable.epochOf`) of the write that left this tip, when it was
   * written under a lease: the next write under the same epoch may trust it after one
   * `stat` of the log.
   */
  leaseEpoch?: number | undefined;
}

/**
 * Who asks for a tip. A `writer` holds the session's lock: it may use its cached tip after
 * two `stat`s (`cachedWriterTip`), needs the last record's body verified, and turns a
 * format-1 session into a snapshot first. A `reader` holds no lock and writes nothing.
 */
export type TipCaller = 'writer' | 'reader';

/**
 * A session's operation log (`session/operations.ts`) as of a known point of its files:
 * the snapshot it starts from (revision, inode and the session's `createdAt`: a session
 * deleted and re-created is another one) and the end of the last log record it holds.
 */
export interface KnownOperations {
  snapRev: number;
  snapIno: number;
  createdAt: number;
  /** The log file's inode (0: none yet) and the end of the last record already in `log`. */
  logIno: number;
  logSize: number;
  log: OperationLog;
}
