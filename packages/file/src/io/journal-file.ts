// One commit-journal file (`journal/<token>.skj`, format 5): a header padded to
// `HEADER_BYTES` (owner, boot id, generation), then records written in place inside space
// allocated beforehand (zeros written and flushed once), then zeros or the records of
// older generations. A reader's records end at the first frame that is damaged, torn,
// zero or of another generation. `CommitJournal` decides which file a commit writes to
// and when a file is checkpointed.

import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  fdatasync,
  openSync,
  readFileSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fsyncDir } from '@sessionkit/core/adapter';
import { encodeFrame } from '../format/frame.js';
import { FORMAT_VERSION } from '../format/version.js';
import { closeQuietly, fdatasyncAsync } from './fs-helpers.js';

/** Bytes before the first record: the header frame, padded with zeros. */
export const HEADER_BYTES = 512;
/** The first allocation (bytes after the header); each later one doubles the space. */
const FIRST_SPACE_BYTES = 64 * 1024;
/** Room a record takes beyond its log frame (prefix, meta with a 128-character id, tail). */
export const RECORD_OVERHEAD = 256;
/** Session logs fdatasync'd at once by a checkpoint that commits wait for (`close()`). */
export const CHECKPOINT_PARALLEL = 8;
/**
 * Session logs fdatasync'd at once by a checkpoint running beside commits: one fewer than
 * the thread pool's default four threads, so a commit's own pooled fdatasync finds a free
 * thread instead of queueing behind the checkpoint's.
 */
export const BACKGROUND_CHECKPOINT_PARALLEL = 3;

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

/** A commit's log record, as the journal is given it. */
export interface JournalEntry {
  id: string;
  snapRev: number;
  offset: number;
  frame: Buffer;
  logPath: string;
}

/** This machine's boot id (Linux), or undefined. */
export function currentBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Writes all of `data` at `position`. */
function writeAt(fd: number, data: Uint8Array, position: number): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done, position + done);
}

/** fdatasync of the file at `path`; a file gone meanwhile (folded, deleted) needs none. */
export function syncLogPath(path: string): Promise<void> {
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

/** One journal file of a store: where its next record goes and which logs it covers. */
export class JournalFile {
  readonly path: string;
  readonly fd: number;
  readonly #owner: JournalOwnerMeta['owner'];
  /** The space this file grows to (the journal's size). */
  readonly #bytes: number;
  #gen = 1;
  /** Where the next record goes, and the end of the space allocated so far. */
  #position = HEADER_BYTES;
  #allocated = HEADER_BYTES;
  /** Session logs written since this file's last checkpoint. */
  readonly #dirtyLogs = new Set<string>();
  /** Records being written and fdatasync'd right now (a checkpoint waits for them). */
  #inFlight = 0;
  #idle: (() => void)[] = [];

  private constructor(path: string, fd: number, owner: JournalOwnerMeta['owner'], bytes: number) {
    this.path = path;
    this.fd = fd;
    this.#owner = owner;
    this.#bytes = bytes;
  }

  /**
   * Creates a new journal file in `dir` (`O_EXCL`, mode 0600) with its header and first
   * space (`whole`: all of its space, written from the thread pool, for a file prepared
   * beside commits), fdatasync'd, and its folder entry fsync'd (the file must survive a
   * machine crash, not only its content). Throws what creating or syncing it throws,
   * leaving no file behind.
   */
  static async create(dir: string, namespace: string | undefined, bytes: number, whole = false) {
    const token = randomUUID();
    const path = join(dir, `${token}.skj`);
    const owner: JournalOwnerMeta['owner'] = { pid: process.pid, hostname: hostname(), token };
    if (namespace !== undefined) owner.pidNamespace = namespace;
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600);
    const file = new JournalFile(path, fd, owner, bytes);
    try {
      writeAt(fd, file.#header(), 0);
      if (whole) await file.#allocateInPool();
      else file.#allocate(HEADER_BYTES + 1);
      await fdatasyncAsync(fd);
      await fsyncDir(dir);
    } catch (e) {
      closeQuietly(fd);
      try {
        unlinkSync(path);
      } catch {
        // nothing to remove
      }
      throw e;
    }
    return file;
  }

  /** Bytes of its space the current generation's records take. */
  get used(): number {
    return this.#position - HEADER_BYTES;
  }

  /** Whether records of `size` bytes fit the space left (an empty file takes any record). */
  fits(size: number): boolean {
    return this.#position + size <= this.#bytes || this.#position === HEADER_BYTES;
  }

  /** True while some record of the current generation is not yet in a synced log. */
  get dirty(): boolean {
    return this.#dirtyLogs.size > 0;
  }

  /**
   * Writes the records of `entries` at the file's position, with the current generation,
   * and resolves once `sync(fd)` has. Their logs are marked dirty for this file's next
   * checkpoint. The caller checked `fits`.
   */
  async write(entries: JournalEntry[], sync: (fd: number) => Promise<void>): Promise<void> {
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
      this.#allocate(this.#position + bytes.length);
      const at = this.#position;
      this.#position += bytes.length;
      writeAt(this.fd, bytes, at);
      await sync(this.fd);
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /**
   * Waits for the records in flight, makes the logs they cover durable (`syncLog`,
   * `parallel` at a time), then starts the file over after its header with the next generation.
   * A crash before the new header is durable leaves the old generation's records, which
   * replay finds already in their logs. On failure the logs stay dirty and the records
   * stay current (the file is still a valid journal of them).
   */
  async checkpoint(syncLog: (path: string) => Promise<void>, parallel: number): Promise<void> {
    while (this.#inFlight > 0) await new Promise<void>((r) => this.#idle.push(r));
    const logs = [...this.#dirtyLogs];
    this.#dirtyLogs.clear();
    try {
      let next = 0;
      const worker = async () => {
        while (next < logs.length) await syncLog(logs[next++]!);
      };
      await Promise.all(Array.from({ length: Math.min(parallel, logs.length) }, worker));
      this.#gen++;
      writeAt(this.fd, this.#header(), 0);
      await fdatasyncAsync(this.fd);
    } catch (e) {
      for (const path of logs) this.#dirtyLogs.add(path);
      throw e;
    }
    this.#position = HEADER_BYTES;
  }

  /** Closes the file and, when no record of it still needs it, removes it. */
  closeAndRemove(): void {
    closeQuietly(this.fd);
    if (this.dirty) return;
    try {
      unlinkSync(this.path);
    } catch {
      // gone already
    }
  }

  /**
   * Makes sure the file holds written zeros up to at least `end`, doubling the space each
   * time (up to the journal's size, or as much as one outsized record needs): the flush
   * after an allocation pays the file-system journal commit once, the later ones do not.
   */
  #allocate(end: number): void {
    if (end <= this.#allocated) return;
    let target = Math.max(HEADER_BYTES + FIRST_SPACE_BYTES, this.#allocated * 2);
    target = Math.max(Math.min(target, this.#bytes), end);
    writeAt(this.fd, Buffer.alloc(target - this.#allocated), this.#allocated);
    this.#allocated = target;
  }

  /**
   * Writes zeros over all of the file's space from the thread pool, 1 MiB at a time, each
   * piece flushed before the next: the commits' own flushes, which queue at the disk
   * behind whatever it is writing, then never wait for more than one piece.
   */
  async #allocateInPool(): Promise<void> {
    const zeros = Buffer.alloc(Math.min(1024 * 1024, this.#bytes));
    for (let at = this.#allocated; at < this.#bytes; at += zeros.length) {
      const n = Math.min(zeros.length, this.#bytes - at);
      await new Promise<void>((resolve, reject) =>
        write(this.fd, zeros, 0, n, at, (e) => (e ? reject(e) : resolve())),
      );
      await fdatasyncAsync(this.fd);
    }
    this.#allocated = Math.max(this.#allocated, this.#bytes);
  }

  /** The header frame of the current generation, padded to `HEADER_BYTES`. */
  #header(): Buffer {
    const meta: JournalOwnerMeta = {
      v: FORMAT_VERSION,
      kind: 'journal',
      owner: this.#owner,
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
}
