// Group commit (`sync: 'group'`): every commit record is written to its session's log
// (no fsync) and, with where it landed, to this store's journal
// (`journal/<token>.skj`). One fdatasync of the journal, at most every `groupCommitMs`,
// makes every record written since durable at once, however many sessions they belong
// to, and only then are those commits acknowledged. The session logs themselves are
// fsync'd at checkpoints (the journal is then emptied) and by `close()`. After a machine
// crash, the next store to open the folder writes the journal's records back into the
// logs that lost them (`session/journal-replay.ts`).

import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  fdatasync,
  ftruncateSync,
  openSync,
  readFileSync,
  readlinkSync,
  unlinkSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fsyncDir } from '@sessionkit/core/adapter';
import { encodeFrame } from '../format/frame.js';
import { FORMAT_VERSION } from '../format/version.js';
import { closeQuietly, fdatasyncAsync, writeAll } from './fs-helpers.js';

/** The journal is emptied (after fsyncing the logs it covers) once it is this large. */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;

/** Meta of a journal's first frame: who writes it (core's lock-file fields) and the boot. */
export interface JournalOwnerMeta {
  v: number;
  kind: 'journal';
  owner: { pid: number; hostname: string; pidNamespace?: string; token: string };
  /** Linux boot id: a journal of another boot is certainly abandoned. */
  bootId?: string;
}

/** Meta of a journal record; its body is the log record's frame, byte for byte. */
export interface JournalRecordMeta {
  v: number;
  kind: 'record';
  id: string;
  snapRev: number;
  /** Where the frame starts in `log-<snapRev>.skr`. */
  offset: number;
}

/** This machine's boot id (Linux), or undefined. */
export function currentBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

function pidNamespace(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

interface Waiter {
  /** The commit's journal record, written by the flush that acknowledges it. */
  record: Buffer;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** One store's group-commit journal. */
export class GroupJournal {
  readonly #dir: string;
  readonly #groupMs: number;
  readonly #namespace: string | undefined;
  #path: string | undefined;
  #fd: number | undefined;
  #headerBytes = 0;
  #size = 0;
  #waiting: Waiter[] = [];
  /** Cancels the scheduled flush, if one is scheduled. */
  #timer: (() => void) | undefined;
  /**
   * When the last flush started (`performance.now()`: monotonic, so a wall-clock step
   * back cannot hold a flush, and the commits waiting for it, for the length of the step).
   */
  #lastStart = Number.NEGATIVE_INFINITY;
  #flushing: Promise<void> | undefined;
  /** Session logs written since the last checkpoint. */
  #dirtyLogs = new Set<string>();
  #checkpointing: Promise<void> | undefined;

  readonly #stats: { groupFlushes: number; groupCommits: number };

  constructor(
    journalDir: string,
    groupMs: number,
    stats: { groupFlushes: number; groupCommits: number },
  ) {
    this.#dir = journalDir;
    this.#groupMs = groupMs;
    this.#stats = stats;
    this.#namespace = pidNamespace();
  }

  /**
   * Writes the log record `frame`, just appended at `offset` of `logPath` (session `id`,
   * snapshot `snapRev`), to the journal, and resolves once the journal is fdatasync'd by
   * the next group flush. Throws what opening or writing the journal throws.
   */
  async commit(id: string, snapRev: number, offset: number, frame: Buffer, logPath: string) {
    await this.#open();
    const meta: JournalRecordMeta = { v: FORMAT_VERSION, kind: 'record', id, snapRev, offset };
    const record = encodeFrame(meta, frame);
    this.#dirtyLogs.add(logPath);
    // The record is written by the flush, with the others it covers (one write, one
    // fdatasync): until the flush the commit is not acknowledged, and its log record is
    // already in the page cache, so a process crash before it loses nothing acknowledged.
    await new Promise<void>((resolve, reject) => {
      this.#waiting.push({ record, resolve, reject });
      this.#schedule();
    });
  }

  /** fsyncs the logs written since the last checkpoint and empties the journal. */
  async checkpoint(): Promise<void> {
    while (this.#checkpointing !== undefined) await this.#checkpointing;
    if (this.#fd === undefined || this.#dirtyLogs.size === 0) return;
    this.#checkpointing = this.#checkpointNow(this.#fd).finally(() => {
      this.#checkpointing = undefined;
    });
    await this.#checkpointing;
  }

  /** Checkpoints, then closes and removes the journal. */
  async close(): Promise<void> {
    while (this.#flushing !== undefined || this.#waiting.length > 0) await this.#flushNow();
    await this.checkpoint();
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd === undefined) return;
    closeQuietly(fd);
    if (this.#path && this.#dirtyLogs.size === 0) {
      try {
        unlinkSync(this.#path);
      } catch {
        // gone already
      }
    }
  }

  async #open(): Promise<number> {
    if (this.#fd !== undefined) return this.#fd;
    const token = randomUUID();
    const path = join(this.#dir, `${token}.skj`);
    const owner: JournalOwnerMeta['owner'] = { pid: process.pid, hostname: hostname(), token };
    if (this.#namespace !== undefined) owner.pidNamespace = this.#namespace;
    const meta: JournalOwnerMeta = { v: FORMAT_VERSION, kind: 'journal', owner };
    const bootId = currentBootId();
    if (bootId !== undefined) meta.bootId = bootId;
    const header = encodeFrame(meta);
    // O_APPEND: after a checkpoint truncates the file, records go after the header again.
    const fd = openSync(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND,
      0o600,
    );
    try {
      writeAll(fd, header);
      await fdatasyncAsync(fd);
      // The journal must survive a machine crash as a file, not only its content.
      await fsyncDir(this.#dir);
    } catch (e) {
      closeQuietly(fd);
      try {
        unlinkSync(path);
      } catch {
        // nothing to remove
      }
      throw e;
    }
    if (this.#fd !== undefined) {
      // Another commit opened one meanwhile: use it, drop ours.
      closeQuietly(fd);
      unlinkSync(path);
      return this.#fd;
    }
    this.#fd = fd;
    this.#path = path;
    this.#headerBytes = header.length;
    this.#size = header.length;
    return fd;
  }

  /**
   * Schedules the next flush: once the commits of this turn of the event loop are in
   * (`setImmediate`), but not before `groupMs` after the previous flush started; while a
   * flush runs, the commits arriving meanwhile wait for the one after it.
   */
  #schedule(): void {
    if (this.#timer || this.#flushing !== undefined) return;
    const fire = () => {
      this.#timer = undefined;
      void this.#flushNow();
    };
    const wait = this.#lastStart + this.#groupMs - performance.now();
    if (wait > 0) {
      const t = setTimeout(fire, wait);
      this.#timer = () => clearTimeout(t);
    } else {
      const t = setImmediate(fire);
      this.#timer = () => clearImmediate(t);
    }
  }

  /** One flush: write the waiting commits' records, fdatasync the journal, settle them. */
  async #flushNow(): Promise<void> {
    if (this.#flushing !== undefined) return this.#flushing;
    this.#timer?.();
    this.#timer = undefined;
    const fd = this.#fd;
    const waiting = this.#waiting;
    this.#waiting = [];
    if (fd === undefined || waiting.length === 0) return;
    this.#lastStart = performance.now();
    this.#flushing = (async () => {
      try {
        const records = Buffer.concat(waiting.map((w) => w.record));
        writeAll(fd, records);
        this.#size += records.length;
        await fdatasyncAsync(fd);
        this.#stats.groupFlushes++;
        this.#stats.groupCommits += waiting.length;
        for (const w of waiting) w.resolve();
      } catch (e) {
        for (const w of waiting) w.reject(e);
      } finally {
        this.#flushing = undefined;
        if (this.#waiting.length > 0) this.#schedule();
      }
      if (this.#size >= CHECKPOINT_BYTES) await this.checkpoint().catch(() => {});
    })();
    return this.#flushing;
  }

  /**
   * Makes the dirty logs durable, then truncates the journal to its header when nothing
   * was written to it meanwhile (otherwise a later checkpoint does). A truncation a crash
   * undoes leaves records that replay finds already in their logs.
   */
  async #checkpointNow(fd: number): Promise<void> {
    const logs = [...this.#dirtyLogs];
    this.#dirtyLogs.clear();
    const covered = this.#size;
    try {
      for (const path of logs) await syncPath(path);
    } catch (e) {
      for (const path of logs) this.#dirtyLogs.add(path);
      throw e;
    }
    if (this.#size === covered && this.#fd === fd && this.#waiting.length === 0) {
      ftruncateSync(fd, this.#headerBytes);
      this.#size = this.#headerBytes;
    }
  }
}

/** fdatasync of the file at `path`; a file gone meanwhile (folded, deleted) needs none. */
function syncPath(path: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return Promise.resolve();
  }
  return new Promise<void>((resolve, reject) =>
    fdatasync(fd, (e) => {
      closeSync(fd);
      if (e) reject(e);
      else resolve();
    }),
  );
}
