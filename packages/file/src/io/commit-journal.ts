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
// the records of older generations (`io/journal-file.ts`). Once a file's records reach the
// end of its space, the store's commits go on in a second file while the session logs the
// first one covers are fdatasync'd in the background, after which the first starts over
// after its header with the next generation (a checkpoint) and waits to take over when
// the second is full: no commit waits for the logs' fdatasyncs, however many sessions a
// file covers. The records a reader finds end at the first frame that is damaged, torn or
// of another generation. After a machine crash the next store to open the folder writes
// back what the logs lost, from every journal file its writer left (`session/journal-replay.ts`).

import { readlinkSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { errors } from '../store/errors.js';
import { fdatasyncAsync } from './fs-helpers.js';
import {
  BACKGROUND_CHECKPOINT_PARALLEL,
  CHECKPOINT_PARALLEL,
  type JournalEntry,
  JournalFile,
  RECORD_OVERHEAD,
  syncLogPath,
} from './journal-file.js';
import type { LogSyncer } from './log-syncer.js';

/** The space a journal file grows to; once its records reach it, the store switches files. */
const JOURNAL_BYTES = 16 * 1024 * 1024;

function pidNamespace(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
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
  /** The space a journal file grows to before the store switches files (tests use a small one). */
  bytes?: number | undefined;
  /** A checkpoint's fdatasync of one session log (tests hold it to observe a checkpoint). */
  syncLog?: ((path: string) => Promise<void>) | undefined;
}

/** One store's commit journal: the file commits write to, and the one that takes over next. */
export class CommitJournal {
  readonly #o: JournalOptions;
  readonly #namespace: string | undefined;
  readonly #bytes: number;
  readonly #syncLog: (path: string) => Promise<void>;
  /** The file commits write to. */
  #active: JournalFile | undefined;
  #opening: Promise<JournalFile> | undefined;
  /** Checkpointed, empty: takes over when the active file is full. */
  #spare: JournalFile | undefined;
  /** The previous active file while its checkpoint runs in the background. */
  #retiring: Promise<void> | undefined;
  /** A file whose background checkpoint failed: checkpointed again before it is reused. */
  #failed: JournalFile | undefined;
  /** The second file, being created and allocated beside commits (see `#prepareSpare`). */
  #preparing: Promise<void> | undefined;
  /** The switch to the next file, while one is under way. */
  #switching: Promise<void> | undefined;
  /** `checkpoint()` of the active file in place (`close()`): writes wait for it. */
  #checkpointing: Promise<void> | undefined;
  #waiting: Waiter[] = [];
  /** Cancels the scheduled group flush, if one is scheduled. */
  #timer: (() => void) | undefined;
  /** When the last group flush started (monotonic: a wall-clock step cannot hold one). */
  #lastStart = Number.NEGATIVE_INFINITY;
  #flushing: Promise<void> | undefined;
  /** Commits between their call and their acknowledgement; `close()` waits for them. */
  #inProgress = 0;
  #quiet: (() => void)[] = [];
  #closed = false;

  constructor(options: JournalOptions) {
    this.#o = options;
    this.#bytes = options.bytes ?? JOURNAL_BYTES;
    this.#syncLog = options.syncLog ?? syncLogPath;
    this.#namespace = pidNamespace();
  }

  /**
   * Writes the log record `frame`, just appended at `offset` of `logPath` (session `id`,
   * snapshot `snapRev`), to the journal, and resolves once the journal file holding it
   * is fdatasync'd: at once (`sync: true`) or by the next group flush. Throws what
   * opening, writing or syncing the journal throws, and what a checkpoint that has to
   * finish first (a file whose background checkpoint failed) throws.
   */
  commit(
    id: string,
    snapRev: number,
    offset: number,
    frame: Buffer,
    logPath: string,
  ): Promise<void> {
    if (this.#closed) return Promise.reject(errors.closed());
    this.#inProgress++;
    const entry: JournalEntry = { id, snapRev, offset, frame, logPath };
    let written: Promise<void>;
    try {
      written = this.#writeAtOnce(entry) ?? this.#commitNow(entry);
    } catch (e) {
      written = Promise.reject(e);
    }
    return written.finally(() => {
      this.#inProgress--;
      if (this.#inProgress === 0) for (const wake of this.#quiet.splice(0)) wake();
    });
  }

  /**
   * `sync: true` with the active file open, no switch or checkpoint under way and room
   * for the record: writes it in this synchronous step (what `#writeDurably` would do
   * after its checks), sparing a commit the general path's awaits, each a promise and a
   * turn of the microtask queue. `undefined` when the general path is needed.
   */
  #writeAtOnce(entry: JournalEntry): Promise<void> | undefined {
    const file = this.#active;
    if (this.#o.group || file === undefined) return undefined;
    if (this.#checkpointing !== undefined || this.#switching !== undefined) return undefined;
    return this.#writeIfFits(file, [entry], entry.frame.length + RECORD_OVERHEAD, true);
  }

  async #commitNow(entry: JournalEntry): Promise<void> {
    await this.#open();
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
    await this.#writeDurably([entry], true);
  }

  /**
   * fdatasyncs the logs every journal file covers and starts each over (the active one in
   * place). Throws what an fdatasync throws; the records then stay current.
   */
  async checkpoint(): Promise<void> {
    while (this.#switching !== undefined) await this.#switching;
    while (this.#retiring !== undefined) await this.#retiring;
    const failed = this.#failed;
    if (failed) {
      await failed.checkpoint(this.#syncLog, CHECKPOINT_PARALLEL);
      this.#failed = undefined;
      this.#spare ??= failed;
      if (this.#spare !== failed) failed.closeAndRemove();
    }
    while (this.#checkpointing !== undefined) await this.#checkpointing;
    const active = this.#active;
    if (active === undefined || !active.dirty) return;
    this.#checkpointing = active.checkpoint(this.#syncLog, CHECKPOINT_PARALLEL).finally(() => {
      this.#checkpointing = undefined;
    });
    await this.#checkpointing;
  }

  /**
   * Lets the commits in progress finish, checkpoints, then closes and removes the journal
   * files; later commits fail with `closed`.
   */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#flushing !== undefined || this.#waiting.length > 0) await this.#flushNow();
    while (this.#inProgress > 0) await new Promise<void>((r) => this.#quiet.push(r));
    await this.#opening?.catch(() => {});
    while (this.#preparing !== undefined) await this.#preparing;
    await this.checkpoint();
    for (const file of [this.#active, this.#spare]) file?.closeAndRemove();
    this.#active = undefined;
    this.#spare = undefined;
  }

  // ------------------------------------------------------------------ writing

  /**
   * Writes the records of `entries` to the active file and fdatasyncs it (`inline`:
   * through the store's `LogSyncer`, which may run it on the event loop; else the thread
   * pool). When they do not fit the space left, the next file takes over first. The
   * records are encoded by the file they land in, so they carry its generation.
   */
  async #writeDurably(entries: JournalEntry[], inline: boolean): Promise<void> {
    let size = 0;
    for (const e of entries) size += e.frame.length + RECORD_OVERHEAD;
    for (;;) {
      while (this.#checkpointing !== undefined) await this.#checkpointing;
      while (this.#switching !== undefined) await this.#switching;
      const file = this.#active!;
      const written = this.#writeIfFits(file, entries, size, inline);
      if (written !== undefined) return written;
      this.#switching = this.#switchFrom(file).finally(() => {
        this.#switching = undefined;
      });
    }
  }

  /**
   * Writes `entries` (`size` bytes of records) to `file` and returns its fdatasync (see
   * `#writeDurably`), preparing the spare once the file is half full; `undefined` when they
   * do not fit the space left.
   */
  #writeIfFits(
    file: JournalFile,
    entries: JournalEntry[],
    size: number,
    inline: boolean,
  ): Promise<void> | undefined {
    if (!file.fits(size)) return undefined;
    const sync = inline ? (fd: number) => this.#o.syncer.sync(fd) : fdatasyncAsync;
    const written = file.write(entries, sync);
    if (file.used * 2 >= this.#bytes) this.#prepareSpare();
    return written;
  }

  /**
   * Makes the next file the active one — the spare, or a new file the first time — and
   * checkpoints `full` in the background, after which it is the spare. Waits only when
   * the previous background checkpoint has not ended yet (the spare is not ready), and
   * checkpoints a file whose background checkpoint failed before reusing it (throwing
   * what it throws).
   */
  async #switchFrom(full: JournalFile): Promise<void> {
    while (this.#preparing !== undefined) await this.#preparing;
    while (this.#retiring !== undefined) await this.#retiring;
    let next = this.#spare;
    this.#spare = undefined;
    if (next === undefined && this.#failed !== undefined) {
      await this.#failed.checkpoint(this.#syncLog, CHECKPOINT_PARALLEL);
      next = this.#failed;
      this.#failed = undefined;
    }
    next ??= await JournalFile.create(this.#o.dir, this.#namespace, this.#bytes);
    this.#active = next;
    this.#retiring = full
      .checkpoint(this.#syncLog, BACKGROUND_CHECKPOINT_PARALLEL)
      .then(
        () => {
          this.#spare = full;
        },
        () => {
          this.#failed = full;
        },
      )
      .finally(() => {
        this.#retiring = undefined;
      });
  }

  /**
   * Once the active file is half full and the store has no second file yet, creates one
   * with all of its space written (from the thread pool) and flushed, so the hand-over
   * costs no allocation on the commit path. A failure leaves it to the switch, which
   * creates the file itself.
   */
  #prepareSpare(): void {
    if (this.#spare || this.#retiring || this.#failed || this.#preparing || this.#closed) return;
    this.#preparing = JournalFile.create(this.#o.dir, this.#namespace, this.#bytes, true)
      .then(
        (file) => {
          this.#spare = file;
        },
        () => {},
      )
      .finally(() => {
        this.#preparing = undefined;
      });
  }

  /** The active file, created with its header on first use. */
  #open(): Promise<JournalFile> {
    if (this.#active !== undefined) return Promise.resolve(this.#active);
    this.#opening ??= JournalFile.create(this.#o.dir, this.#namespace, this.#bytes)
      .then((file) => {
        this.#active = file;
        return file;
      })
      .finally(() => {
        this.#opening = undefined;
      });
    return this.#opening;
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
    const waiting = this.#waiting;
    this.#waiting = [];
    if (this.#active === undefined || waiting.length === 0) return;
    this.#lastStart = performance.now();
    this.#flushing = (async () => {
      try {
        await this.#writeDurably(
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
}
