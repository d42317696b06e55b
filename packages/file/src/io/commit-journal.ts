// The commit journal (`journal/<token>.skj`, format 5): what makes a commit durable with
// `sync: true` and `sync: 'group'`. Every commit record is written to its session's log
// without an fsync and, with where it landed, to this store's journal, whose fdatasync is
// the commit's one flush: one per commit (`true`) or one per group of commits
// (`'group'`). The journal is written *in place*, inside space allocated beforehand (zero
// bytes written and flushed once), the way SQLite's WAL is: an fdatasync that changes
// no file size and allocates no block only writes the data, without a file-system
// journal commit, which an append that grows a file pays on every flush.
//
// Layout: a header frame padded to `HEADER_BYTES` (owner, boot id, generation), then
// records (frames whose meta names the generation, the session, its snapshot and the
// record's offset in that log; whose body is the log frame byte for byte), then zeros or
// the records of older generations. Once the records reach the allocated end, the session
// logs they cover are fdatasync'd and the journal starts over after its header with the
// next generation (a checkpoint): the records a reader finds end at the first frame that
// is damaged, torn or of another generation. After a machine crash the next store to open
// the folder writes back what the logs lost (`session/journal-replay.ts`).

import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  fdatasync,
  openSync,
  readFileSync,
  readlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fsyncDir } from '@sessionkit/core/adapter';
import { encodeFrame } from '../format/frame.js';
import { FORMAT_VERSION } from '../format/version.js';
import { errors } from '../store/errors.js';
import { closeQuietly, fdatasyncAsync } from './fs-helpers.js';
import type { LogSyncer } from './log-syncer.js';

/** Bytes before the first record: the header frame, padded with zeros. */
export const HEADER_BYTES = 512;
/** The first allocation (bytes after the header); each later one doubles the space. */
const FIRST_SPACE_BYTES = 64 * 1024;
/** The space a journal grows to; once its records reach it, the journal checkpoints. */
const JOURNAL_BYTES = 16 * 1024 * 1024;
/** Room a record takes beyond its log frame (prefix, meta with a 128-character id, tail). */
const RECORD_OVERHEAD = 256;
/** Session logs fdatasync'd at once by a checkpoint (the thread pool runs them side by side). */
const CHECKPOINT_PARALLEL = 8;

/** Meta of a journal's first frame: who writes it (core's lock-file fields), the boot, the generation. */
export interface JournalOwnerMeta {
  v: number;
  kind: 'journal';
  owner: { pid: number; hostname: string; pidNamespace?: string; token: string };
  /** Linux boot id: a journal of another boot is certainly abandoned. */
  bootId?: string;
  /** Format 5: the generation its current records carry (format 4 journals have none). */
  gen?: number;
}

/** Meta of a journal record; its body is the log record's frame, byte for byte. */
export interface JournalRecordMeta {
  v: number;
  kind: 'record';
  /** Format 5: the journal generation the record was written in. */
  gen?: number;
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

/** Writes all of `data` at `position`. */
function writeAt(fd: number, data: Uint8Array, position: number): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done, position + done);
}

/** A commit's log record, as the journal is given it. */
interface JournalEntry {
  id: string;
  snapRev: number;
  offset: number;
  frame: Buffer;
  logPath: string;
}

interface Waiter {
  /** The commit's record, written by the flush that acknowledges it. */
  entry: JournalEntry;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** What a journal is told by its store. */
export interface JournalOptions {
  dir: string;
  /** `'group'`: commits wait for a shared flush, at most every `groupMs`. */
  group: boolean;
  groupMs: number;
  /** Where a lone commit's fdatasync runs (`sync: true`). */
  syncer: LogSyncer;
  stats: { groupFlushes: number; groupCommits: number };
  /** The space the journal grows to before it checkpoints (tests use a small one). */
  bytes?: number | undefined;
}

/** One store's commit journal. */
export class CommitJournal {
  readonly #o: JournalOptions;
  readonly #namespace: string | undefined;
  #path: string | undefined;
  #fd: number | undefined;
  #opening: Promise<number> | undefined;
  #owner: JournalOwnerMeta['owner'] | undefined;
  #gen = 0;
  /** Where the next record goes, and the end of the space allocated so far. */
  #position = HEADER_BYTES;
  #allocated = HEADER_BYTES;
  #waiting: Waiter[] = [];
  /** Cancels the scheduled group flush, if one is scheduled. */
  #timer: (() => void) | undefined;
  /** When the last group flush started (monotonic: a wall-clock step cannot hold one). */
  #lastStart = Number.NEGATIVE_INFINITY;
  #flushing: Promise<void> | undefined;
  /** Records being written and fdatasync'd right now (a checkpoint waits for them). */
  #inFlight = 0;
  #idle: (() => void)[] = [];
  /** Session logs written since the last checkpoint. */
  #dirtyLogs = new Set<string>();
  #checkpointing: Promise<void> | undefined;
  /** Commits between their call and their acknowledgement; `close()` waits for them. */
  #active = 0;
  #quiet: (() => void)[] = [];
  #closed = false;

  readonly #bytes: number;

  constructor(options: JournalOptions) {
    this.#o = options;
    this.#bytes = options.bytes ?? JOURNAL_BYTES;
    this.#namespace = pidNamespace();
  }

  /**
   * Writes the log record `frame`, just appended at `offset` of `logPath` (session `id`,
   * snapshot `snapRev`), to the journal, and resolves once the journal holding it is
   * fdatasync'd: at once (`sync: true`) or by the next group flush. Throws what opening,
   * writing or syncing the journal throws.
   */
  async commit(id: string, snapRev: number, offset: number, frame: Buffer, logPath: string) {
    if (this.#closed) throw errors.closed();
    this.#active++;
    try {
      await this.#commitNow({ id, snapRev, offset, frame, logPath });
    } finally {
      this.#active--;
      if (this.#active === 0) for (const wake of this.#quiet.splice(0)) wake();
    }
  }

  async #commitNow(entry: JournalEntry): Promise<void> {
    const fd = await this.#open();
    if (this.#o.group) {
      // The record is written by the flush, with the others it covers (one write, one
      // fdatasync): until then the commit is not acknowledged, and its log record is
      // already in the page cache, so a process crash before it loses nothing acknowledged.
      await new Promise<void>((resolve, reject) => {
        this.#waiting.push({ entry, resolve, reject });
        this.#schedule();
      });
      return;
    }
    await this.#writeDurably(fd, [entry], true);
  }

  /** fdatasyncs the logs written since the last checkpoint and starts the journal over. */
  async checkpoint(): Promise<void> {
    while (this.#checkpointing !== undefined) await this.#checkpointing;
    const fd = this.#fd;
    if (fd === undefined || this.#dirtyLogs.size === 0) return;
    this.#checkpointing = this.#checkpointNow(fd).finally(() => {
      this.#checkpointing = undefined;
    });
    await this.#checkpointing;
  }

  /**
   * Lets the commits in progress finish, checkpoints, then closes and removes the journal;
   * later commits fail with `closed`.
   */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#flushing !== undefined || this.#waiting.length > 0) await this.#flushNow();
    while (this.#active > 0) await new Promise<void>((r) => this.#quiet.push(r));
    await this.#opening?.catch(() => {});
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

  // ------------------------------------------------------------------ writing

  /**
   * Writes the records of `entries` at the journal's position and fdatasyncs it
   * (`inline`: through the store's `LogSyncer`, which may run it on the event loop; else
   * the thread pool). Checkpoints first when they do not fit the space left. The records
   * are encoded here, after any checkpoint, so they carry the generation they land in, and
   * their logs are marked dirty for the checkpoint that ends that generation.
   */
  async #writeDurably(fd: number, entries: JournalEntry[], inline: boolean): Promise<void> {
    let size = 0;
    for (const e of entries) size += e.frame.length + RECORD_OVERHEAD;
    if (this.#position + size > this.#bytes && this.#position > HEADER_BYTES)
      await this.checkpoint();
    while (this.#checkpointing !== undefined) await this.#checkpointing;
    const records = entries.map((e) => {
      this.#dirtyLogs.add(e.logPath);
      const meta: JournalRecordMeta = {
        v: FORMAT_VERSION,
        kind: 'record',
        gen: this.#gen,
        id: e.id,
        snapRev: e.snapRev,
        offset: e.offset,
      };
      return encodeFrame(meta, e.frame);
    });
    const bytes = records.length === 1 ? records[0]! : Buffer.concat(records);
    this.#inFlight++;
    try {
      this.#allocate(fd, this.#position + bytes.length);
      const at = this.#position;
      this.#position += bytes.length;
      writeAt(fd, bytes, at);
      await (inline ? this.#o.syncer.sync(fd) : fdatasyncAsync(fd));
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /**
   * Makes sure the file holds written zeros up to at least `end`, doubling the space each
   * time (up to the journal's size, or as much as one outsized record needs): the flush
   * after an allocation pays the file-system journal commit once, the later ones do not.
   */
  #allocate(fd: number, end: number): void {
    if (end <= this.#allocated) return;
    let target = Math.max(HEADER_BYTES + FIRST_SPACE_BYTES, this.#allocated * 2);
    target = Math.max(Math.min(target, this.#bytes), end);
    writeAt(fd, Buffer.alloc(target - this.#allocated), this.#allocated);
    this.#allocated = target;
  }

  /** The journal's descriptor, created with its header on first use. */
  #open(): Promise<number> {
    if (this.#fd !== undefined) return Promise.resolve(this.#fd);
    this.#opening ??= this.#create().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #create(): Promise<number> {
    const token = randomUUID();
    const path = join(this.#o.dir, `${token}.skj`);
    const owner: JournalOwnerMeta['owner'] = { pid: process.pid, hostname: hostname(), token };
    if (this.#namespace !== undefined) owner.pidNamespace = this.#namespace;
    this.#owner = owner;
    this.#gen = 1;
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeAt(fd, this.#header(), 0);
      this.#allocated = HEADER_BYTES;
      this.#allocate(fd, HEADER_BYTES + 1);
      await fdatasyncAsync(fd);
      // The journal must survive a machine crash as a file, not only its content.
      await fsyncDir(this.#o.dir);
    } catch (e) {
      closeQuietly(fd);
      try {
        unlinkSync(path);
      } catch {
        // nothing to remove
      }
      throw e;
    }
    this.#fd = fd;
    this.#path = path;
    return fd;
  }

  /** The header frame of the current generation, padded to `HEADER_BYTES`. */
  #header(): Buffer {
    const meta: JournalOwnerMeta = {
      v: FORMAT_VERSION,
      kind: 'journal',
      owner: this.#owner!,
      gen: this.#gen,
    };
    const bootId = currentBootId();
    if (bootId !== undefined) meta.bootId = bootId;
    const frame = encodeFrame(meta);
    if (frame.length > HEADER_BYTES) throw new Error('journal header too large');
    const out = Buffer.alloc(HEADER_BYTES);
    frame.copy(out);
    return out;
  }

  // ------------------------------------------------------------------ group flushes

  /**
   * Schedules the next group flush: once the commits of this turn of the event loop are
   * in (`setImmediate`), but not before `groupMs` after the previous flush started; while
   * a flush runs, the commits arriving meanwhile wait for the one after it.
   */
  #schedule(): void {
    if (this.#timer || this.#flushing !== undefined) return;
    const fire = () => {
      this.#timer = undefined;
      void this.#flushNow();
    };
    const wait = this.#lastStart + this.#o.groupMs - performance.now();
    if (wait > 0) {
      const t = setTimeout(fire, wait);
      this.#timer = () => clearTimeout(t);
    } else {
      const t = setImmediate(fire);
      this.#timer = () => clearImmediate(t);
    }
  }

  /** One group flush: write the waiting commits' records, fdatasync the journal, settle them. */
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
        await this.#writeDurably(
          fd,
          waiting.map((w) => w.entry),
          false,
        );
        this.#o.stats.groupFlushes++;
        this.#o.stats.groupCommits += waiting.length;
        for (const w of waiting) w.resolve();
      } catch (e) {
        for (const w of waiting) w.reject(e);
      } finally {
        this.#flushing = undefined;
        if (this.#waiting.length > 0) this.#schedule();
      }
    })();
    return this.#flushing;
  }

  // ------------------------------------------------------------------ checkpoints

  /**
   * Waits for the records in flight, makes the dirty logs durable (several fdatasyncs
   * side by side in the thread pool), then starts the journal over after its header with
   * the next generation. A crash before the new header is durable leaves the old
   * generation's records, which replay finds already in their logs.
   */
  async #checkpointNow(fd: number): Promise<void> {
    while (this.#inFlight > 0) await new Promise<void>((r) => this.#idle.push(r));
    const logs = [...this.#dirtyLogs];
    this.#dirtyLogs.clear();
    try {
      for (let i = 0; i < logs.length; i += CHECKPOINT_PARALLEL)
        await Promise.all(logs.slice(i, i + CHECKPOINT_PARALLEL).map(syncPath));
    } catch (e) {
      for (const path of logs) this.#dirtyLogs.add(path);
      throw e;
    }
    this.#gen++;
    writeAt(fd, this.#header(), 0);
    await fdatasyncAsync(fd);
    this.#position = HEADER_BYTES;
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
