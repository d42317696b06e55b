// Session leases: a store keeps a session's lock file (`locks/<id>.lock`) across its
// consecutive writes of that session instead of creating and removing it around each one,
// so a commit costs no lock-file metadata operations. Other processes see an ordinary
// lock file (core's `withFileLock` format): they wait for it, ask for it through a *want*
// file, and break it when its holder is gone or its mtime is older than `lockStaleMs`.

import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  type FSWatcher,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  utimesSync,
  watch,
} from 'node:fs';
import { join } from 'node:path';
import { SessionWriteQueue, withFileLock } from '@sessionkit/core/adapter';
import { createLockFile } from '../io/lock-file.js';
import { errors } from '../store/errors.js';

/** Leases a store keeps at most (each is one lock file; no descriptor stays open). */
const MAX_LEASES = 4096;
/**
 * How often a store holding leases looks for want files of other processes: while it
 * watches the wants folder (inotify, FSEvents, …) a want is seen when it is created and
 * the poll only covers events a file system does not deliver (a network file system
 * written from another host); without a watch, the poll is all there is.
 */
const WANT_POLL_MS = 10;
/** A lease term under this is refreshed by the timer even during a single write. */
const SHORT_TERM_MS = 60_000;
const WANT_POLL_WATCHED_MS = 100;

/** One held lease. */
interface Lease {
  id: string;
  path: string;
  /** Created by this store: its inode and token (released by unlinking it). */
  own: { ino: number; token: string; mtimeAt: number } | undefined;
  /** Held through core's `withFileLock` (after contention): ends that call. */
  endCore: (() => Promise<void>) | undefined;
  lastUsed: number;
  /**
   * A write runs under it right now, or is about to: a lease is taken for a write and is
   * in section from then on, so a release asked for before that write resumes (another
   * store's `requestRelease`, the timer) waits for it to end instead of running it
   * without the lock.
   */
  inSection: boolean;
  /** Someone else asked for it: released when the running write ends. */
  wanted: boolean;
  /** Lost (broken by another process after a stall): released without unlinking. */
  lost: boolean;
  /**
   * Names this unbroken holding: a new number whenever the lock is taken anew or a write
   * under it fails, so what a write cached under one number is not trusted under another.
   */
  epoch: number;
}

/** The last lease epoch handed out in this process. */
let lastEpoch = 0;

/** Leases held in this process, by lock path: stores of one process hand them over at once. */
interface ProcessLeases {
  holders: Map<string, { requestRelease(): void }>;
  tables: Set<LeaseTable>;
}
const PROCESS_KEY = Symbol.for('sessionkit.file.leases.v1');
const slots = globalThis as Record<symbol, ProcessLeases | undefined>;
const processLeases: ProcessLeases = slots[PROCESS_KEY] ?? {
  holders: new Map(),
  tables: new Set(),
};
slots[PROCESS_KEY] = processLeases;
let exitHookInstalled = false;

/**
 * Leaves no lock file behind on a normal exit (a kill leaves it to be broken: its holder
 * is gone). Installed once per copy of this module, by the first lease table.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const table of processLeases.tables) table.releaseAllNow();
  });
}

/** What a lease table needs of its store. */
export interface LeaseOptions {
  locksDir: string;
  wantsDir: string;
  lockPath: (id: string) => string;
  timeoutMs: number;
  staleMs: number;
  /** Keep a lease this long after its last write; 0 releases after every write. */
  leaseMs: number;
}

/**
 * The session locks of one store. `run(id, fn)` runs `fn` holding the session's lock:
 * serialised in this process by a mutex per session, across processes by the lock file,
 * which is kept after a write that asks for it (`keep`) until the lease is idle for
 * `leaseMs`, another store or process asks for it, the table is full, or the store closes.
 */
export class LeaseTable {
  readonly #o: LeaseOptions;
  /** This store's writes of a session, one at a time (the kit's queue, `timeoutMs`). */
  readonly #queue: SessionWriteQueue;
  readonly #leases = new Map<string, Lease>();
  #timer: NodeJS.Timeout | undefined;
  /** Watches the wants folder while leases are held; undefined where watching fails. */
  #watcher: FSWatcher | undefined;
  /** A watch failed once: this table polls from then on. */
  #watchFailed = false;
  #pollMs = WANT_POLL_MS;
  #lastSweep = 0;
  #wantsSeenAt = 0;
  #wanted = new Set<string>();
  #closed = false;

  constructor(options: LeaseOptions) {
    this.#o = options;
    this.#queue = new SessionWriteQueue(errors, options.timeoutMs);
    processLeases.tables.add(this);
    installExitHook();
  }

  /** Whether this store holds `id`'s lock right now (its index entry is kept in step). */
  holds(id: string): boolean {
    return this.#leases.has(id);
  }

  /**
   * The epoch of the write running under `id`'s lock right now, `undefined` outside one or
   * once the lock was lost. Equal epochs of two writes mean the lock was held without a
   * break between them (no other store or process can have written the session).
   */
  epochOf(id: string): number | undefined {
    const lease = this.#leases.get(id);
    return lease?.inSection && !lease.lost ? lease.epoch : undefined;
  }

  /**
   * Runs `fn` holding session `id`'s lock. With `keep`, a lease this call took is kept
   * for the next write; a lease held before is kept unless the call fails. `outer`: the
   * sessions whose locks the caller holds while it takes this one (a lock taken inside
   * another, e.g. a deleted session's child), named by the caller rather than found
   * through an `AsyncLocalStorage`, whose context every promise of a commit would carry
   * (Node 20 and 22 propagate it through promise hooks). Throws
   * `invalid_argument` when `outer` holds `id` (not reentrant: waiting would deadlock),
   * `unavailable` after `timeoutMs`, and whatever `fn` throws.
   */
  async run<T>(
    id: string,
    fn: () => Promise<T>,
    keep: boolean,
    outer: readonly string[] = [],
  ): Promise<T> {
    if (outer.includes(id)) {
      throw errors.invalid(`the lock of session "${id}" is already held by this call chain`);
    }
    const deadline = Date.now() + this.#o.timeoutMs;
    return this.#queue.run(id, () => this.#runQueued(id, fn, keep, deadline));
  }

  /** `run` once this store's earlier writes of `id` are done. */
  async #runQueued<T>(
    id: string,
    fn: () => Promise<T>,
    keep: boolean,
    deadline: number,
  ): Promise<T> {
    let lease = this.#leases.get(id);
    if (lease) {
      this.#refreshIfDue(lease, Date.now());
      if (lease.lost) {
        // Broken by another process while we stalled: take the lock anew.
        await this.#release(lease);
        lease = undefined;
      }
    }
    const fresh = lease === undefined;
    if (!lease) lease = await this.#acquire(id, deadline);
    else {
      this.#leases.delete(id); // most recently used last
      this.#leases.set(id, lease);
    }
    lease.inSection = true;
    let ok = false;
    try {
      const result = await fn();
      ok = true;
      return result;
    } finally {
      lease.inSection = false;
      lease.lastUsed = Date.now();
      if (!ok) lease.epoch = ++lastEpoch;
      const keepIt =
        ok &&
        !this.#closed &&
        !lease.wanted &&
        !lease.lost &&
        this.#o.leaseMs > 0 &&
        (keep || !fresh) &&
        !this.#isWanted(id);
      if (keepIt) {
        this.#startTimer();
        this.#afterKeep();
      } else await this.#release(lease);
    }
  }

  /** Releases every lease not in use; the others are released when their write ends. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const lease of [...this.#leases.values()]) {
      if (lease.inSection) lease.wanted = true;
      else await this.#release(lease);
    }
    this.#stopTimer();
    processLeases.tables.delete(this);
  }

  /** On process exit: removes the lock files of this store's own leases, synchronously. */
  releaseAllNow(): void {
    for (const lease of this.#leases.values()) if (lease.own) this.#unlinkOwn(lease);
    this.#leases.clear();
  }

  // -------------------------------------------------------------- taking a lease

  /** Takes `id`'s lock file: created at once when free, else through core's waiting. */
  async #acquire(id: string, deadline: number): Promise<Lease> {
    const path = this.#o.lockPath(id);
    if (!this.#isWanted(id)) {
      const token = randomUUID();
      const mtimeAt = Date.now() + this.#term;
      const ino = createLockFile(path, token, new Date(mtimeAt));
      if (ino !== undefined) return this.#add(id, path, { ino, token, mtimeAt });
    }
    // Held elsewhere. A store of this process hands it over at once; another process
    // sees our want file within its poll interval.
    processLeases.holders.get(path)?.requestRelease();
    const want = this.#createWant(id);
    try {
      return await this.#acquireThroughCore(id, path, deadline);
    } finally {
      if (want) {
        try {
          unlinkSync(want);
        } catch {
          // gone already
        }
      }
    }
  }

  /**
   * Waits for the lock through core's `withFileLock` (which breaks locks of dead holders
   * and stale ones) and keeps it held by a call that ends when the lease is released.
   */
  #acquireThroughCore(id: string, path: string, deadline: number): Promise<Lease> {
    return new Promise<Lease>((resolve, reject) => {
      let end: () => void = () => {};
      const ended = new Promise<void>((r) => {
        end = r;
      });
      let taken = false;
      const holding = withFileLock(
        path,
        () => {
          taken = true;
          const lease = this.#add(id, path, undefined);
          lease.endCore = async () => {
            end();
            await holding.catch(() => {});
          };
          resolve(lease);
          return ended;
        },
        { timeoutMs: Math.max(0, deadline - Date.now()), staleMs: this.#o.staleMs },
      );
      holding.catch((e: unknown) => {
        if (!taken) reject(e);
      });
    });
  }

  #add(id: string, path: string, own: Lease['own']): Lease {
    const lease: Lease = {
      id,
      path,
      own,
      endCore: undefined,
      lastUsed: Date.now(),
      // Taken for the write that awaits it: see `Lease.inSection`.
      inSection: true,
      wanted: false,
      lost: false,
      epoch: ++lastEpoch,
    };
    this.#leases.set(id, lease);
    processLeases.holders.set(path, {
      requestRelease: () => {
        if (this.#leases.get(id) !== lease) return;
        lease.wanted = true;
        if (!lease.inSection) void this.#release(lease);
      },
    });
    // A lock held for one call is dated a term ahead when taken: only a short term (a
    // small `leaseMs`) needs the timer's refresh during a long write. Kept leases start it
    // (wants, idle release); a create or save no longer sets up a folder watch for itself.
    if (this.#term < SHORT_TERM_MS) this.#startTimer();
    return lease;
  }

  /** A want file for `id` in `locks/wants/` (removed once the lock is taken). */
  #createWant(id: string): string | undefined {
    const path = join(this.#o.wantsDir, `${id}.${randomUUID()}`);
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT, 0o600));
      return path;
    } catch {
      return undefined; // a hint only: the holder still releases once idle
    }
  }

  // -------------------------------------------------------------- keeping and releasing

  async #release(lease: Lease): Promise<void> {
    if (this.#leases.get(lease.id) !== lease) return;
    this.#leases.delete(lease.id);
    const holder = processLeases.holders.get(lease.path);
    if (holder) processLeases.holders.delete(lease.path);
    if (lease.own) {
      if (!lease.lost) this.#unlinkOwn(lease);
    } else await lease.endCore?.();
    if (this.#leases.size === 0) this.#stopTimer();
  }

  /** Removes our lock file, only while it is still ours (its token). */
  #unlinkOwn(lease: Lease): void {
    try {
      const content = readFileSync(lease.path, 'utf8');
      if (content.includes(lease.own?.token ?? '\u0000')) unlinkSync(lease.path);
    } catch {
      // gone already, or unreadable: it goes stale and is broken later
    }
  }

  /** After a kept write: trims the table to its bound (least recently used first). */
  #afterKeep(): void {
    if (this.#leases.size <= MAX_LEASES) return;
    for (const lease of this.#leases.values()) {
      if (this.#leases.size <= MAX_LEASES) break;
      if (!lease.inSection) void this.#release(lease);
    }
  }

  /**
   * The lease's term: our lock file's mtime is set this far into the future, so other
   * processes (which break a lock once its mtime is `lockStaleMs` old) see it as fresh for
   * the term plus their stale time, and a lease needs refreshing only once per half term,
   * on use, not once per `lockStaleMs / 3` per lease. A lease idle for `leaseMs` is
   * released while at least half its term is left (see `#tick`).
   */
  get #term(): number {
    return Math.max(2 * this.#o.leaseMs, this.#o.staleMs);
  }

  /** Moves our lock file's mtime a term ahead once less than half a term is left. */
  #refreshIfDue(lease: Lease, now: number): void {
    const own = lease.own;
    const term = this.#term;
    if (!own || own.mtimeAt - now >= term / 2) return;
    try {
      if (Number(statSync(lease.path).ino) !== own.ino) throw new Error('replaced');
      const at = new Date(now + term);
      utimesSync(lease.path, at, at);
      own.mtimeAt = now + term;
    } catch {
      // Broken by another process (we stalled past the stale time): not ours any more.
      lease.lost = true;
    }
  }

  /** Whether another waiter has a want file for `id` (read at most every poll period). */
  #isWanted(id: string): boolean {
    const now = Date.now();
    if (now - this.#wantsSeenAt >= this.#pollMs) this.#pollWants(now);
    return this.#wanted.has(id);
  }

  #pollWants(now: number): void {
    this.#wantsSeenAt = now;
    let names: string[];
    try {
      names = readdirSync(this.#o.wantsDir);
    } catch {
      names = [];
    }
    const wanted = new Set<string>();
    for (const name of names) {
      const dot = name.lastIndexOf('.');
      if (dot > 0) wanted.add(name.slice(0, dot));
    }
    this.#wanted = wanted;
  }

  /** The timer: releases wanted and idle leases, refreshes those of long writes. */
  #tick(): void {
    const now = Date.now();
    this.#pollWants(now);
    for (const id of this.#wanted) {
      const lease = this.#leases.get(id);
      if (!lease) continue;
      lease.wanted = true;
      if (!lease.inSection) void this.#release(lease);
    }
    if (now - this.#lastSweep < Math.min(this.#o.staleMs, this.#term) / 6) return;
    this.#lastSweep = now;
    for (const lease of [...this.#leases.values()]) {
      if (lease.inSection) this.#refreshIfDue(lease, now);
      else if (now - lease.lastUsed >= this.#o.leaseMs || lease.lost) void this.#release(lease);
    }
  }

  #startTimer(): void {
    if (this.#timer) return;
    this.#watcher = this.#watchWants();
    this.#pollMs = this.#watcher ? WANT_POLL_WATCHED_MS : WANT_POLL_MS;
    this.#timer = setInterval(() => this.#tick(), this.#pollMs);
    this.#timer.unref();
  }

  /**
   * A watch of the wants folder that runs `#tick` when a want file appears, so an idle
   * store holding leases wakes when asked instead of a hundred times a second; undefined
   * when the platform or file system cannot watch it (the 10 ms poll then serves).
   */
  #watchWants(): FSWatcher | undefined {
    if (this.#watchFailed) return undefined;
    try {
      // Not persistent: holding a lease never keeps the process alive.
      const watcher = watch(this.#o.wantsDir, { persistent: false }, () => {
        this.#wantsSeenAt = 0;
        this.#tick();
      });
      watcher.on('error', () => {
        // The folder went away or the watch broke: fall back to the fast poll for good.
        this.#watchFailed = true;
        watcher.close();
        if (this.#watcher !== watcher) return;
        this.#watcher = undefined;
        this.#stopTimer();
        if (this.#leases.size > 0) this.#startTimer();
      });
      return watcher;
    } catch {
      this.#watchFailed = true;
      return undefined;
    }
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const watcher = this.#watcher;
    this.#watcher = undefined;
    watcher?.close();
  }
}
