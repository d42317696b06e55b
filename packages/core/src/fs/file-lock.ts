import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  promises as fsp,
  fstatSync,
  futimes,
  openSync,
  readlinkSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { errorsFor } from '../errors.js';
import { errnoCode } from './errno.js';

const errors = errorsFor('core');

/** Options of `withFileLock`. */
export interface FileLockOptions {
  /** Give up after waiting this long, with `unavailable`. `0` tries once. Default 10 000 ms. */
  timeoutMs?: number;
  /**
   * A lock file whose mtime is older than this is considered abandoned and broken. The
   * holder refreshes the mtime every `staleMs / 3`, so a live holder never looks stale
   * unless its event loop is blocked for longer than this. Default 30 000 ms.
   */
  staleMs?: number;
  /** First retry delay while the lock is held elsewhere; later ones grow, jittered. Default 20 ms. */
  retryMs?: number;
}

/** What a lock file contains. */
export interface FileLockInfo {
  pid: number;
  hostname: string;
  /** ISO 8601. */
  acquiredAt: string;
  /** Random; only the holder of this token may release the lock. */
  token: string;
  /**
   * The holder's pid namespace on Linux (`/proc/self/ns/pid`, e.g. `pid:[4026531836]`);
   * absent elsewhere and in lock files of older versions. Containers sharing a hostname
   * have different namespaces, so the pid is only meaningful when this matches ours.
   */
  pidNamespace?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_STALE_MS = 30_000;
const DEFAULT_RETRY_MS = 20;
// A breaker file (`<lockPath>.break`) is held for microseconds; one older than this was left
// by a breaker that crashed or stalled, and may be removed.
const BREAKER_STALE_MS = 5_000;

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout | undefined;
}
interface Mutex {
  held: boolean;
  waiters: Waiter[];
}
interface Holding {
  key: string;
  active: boolean;
}
interface Registry {
  mutexes: Map<string, Mutex>;
  context: AsyncLocalStorage<Holding[]>;
}

// Shared through a global symbol so two copies of this package in one process (a
// duplicated dependency) still serialise on the same paths.
const REGISTRY_KEY = Symbol.for('sessionkit.fileLock.registry.v1');
const globalSlots = globalThis as Record<symbol, Registry | undefined>;
const registry: Registry = globalSlots[REGISTRY_KEY] ?? {
  mutexes: new Map(),
  context: new AsyncLocalStorage<Holding[]>(),
};
globalSlots[REGISTRY_KEY] = registry;

function checkOption(value: unknown, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw errors.invalid(`withFileLock: ${name} must be a number >= ${min}, got ${String(value)}`);
  }
  return value;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Creates `path` with O_CREAT|O_EXCL and mode 0600: the one atomic step every lock and
 * breaker file is taken with. `undefined` when the file already exists.
 */
async function createExclusive(path: string): Promise<fsp.FileHandle | undefined> {
  try {
    return await fsp.open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return undefined;
    throw e;
  }
}

/**
 * The content `withFileLock` writes into a lock file it takes with `token`: JSON
 * `{pid, hostname, pidNamespace, acquiredAt, token}` of this process, now. An adapter
 * that keeps a lock across calls (the file store's leases) writes the same, so every
 * process judges its lock files by one rule (`lockHolderState`).
 */
export function lockFileContent(token: string): string {
  const info: FileLockInfo = {
    pid: process.pid,
    hostname: ownHostname(),
    acquiredAt: new Date().toISOString(),
    token,
  };
  const ns = ownPidNamespace();
  if (ns !== undefined) info.pidNamespace = ns;
  return JSON.stringify(info);
}

/**
 * The lock file's fast path: create it (O_CREAT|O_EXCL, mode 0600) and write `content` in
 * one synchronous step, returning the descriptor, or `undefined` when the file exists.
 * Synchronous calls here are deliberate: these are two tiny local metadata operations on
 * every commit of the file store, and a thread-pool round trip for each costs more than
 * the calls themselves. An empty lock file (a holder killed between the two calls, or a
 * network file system that has not shown another host the content yet) is judged by its
 * mtime alone, like any lock whose holder cannot be identified.
 */
export function createLockFileSync(path: string, content: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return undefined;
    throw e;
  }
  try {
    writeSync(fd, content);
  } catch (e) {
    // Remove the file only while it is still ours: had we stalled past staleMs it may
    // have been broken and re-created by a new holder.
    try {
      const mine = fstatSync(fd);
      const now = statSync(path);
      if (now.ino === mine.ino && now.dev === mine.dev) unlinkSync(path);
    } catch {
      // gone already; if ours stays it is empty or partial and goes stale
    }
    try {
      closeSync(fd);
    } catch {
      // nothing held
    }
    throw e;
  }
  return fd;
}

/**
 * Runs `fn` while holding an exclusive lock on `lockPath`, shared by every process of
 * this host (and by processes on other hosts that see the same file system, through
 * the mtime rule below), and returns what `fn` returns. The lock is released when `fn`
 * settles, whether it resolves or throws.
 *
 * The lock is the file `lockPath`, created with `O_CREAT | O_EXCL` and mode `0600`,
 * holding JSON `{pid, hostname, pidNamespace, acquiredAt, token}`. While `fn` runs its
 * mtime is refreshed every `staleMs / 3`. A lock file left behind is stale when its mtime
 * is older than `staleMs`, or when its holder's pid is not alive — judged only when the
 * lock names this host and this pid namespace (Linux), otherwise (an empty file, another
 * host, another namespace) by the mtime alone.
 * Breaking a stale lock happens under a second, short-lived lock `<lockPath>.break`
 * (`O_EXCL`): its holder re-reads the lock and unlinks it only if it is still the very
 * file judged stale (same content, inode and mtime), so one stale lock is broken once and
 * a fresh lock is never removed. Release unlinks `lockPath` only while it is still this
 * holder's file (same inode, kept alive by the holder's open descriptor; on a network
 * file system another host's unlink can free that inode, so there a holder stalled past
 * `staleMs` keeps a small risk of removing its successor's lock). No lock file is
 * ever moved. Taking and releasing an uncontended lock costs a handful of synchronous
 * system calls on the lock file (no thread-pool round trips): it sits on every commit.
 *
 * Within one process, callers for the same path queue on an in-memory mutex rather than
 * polling the file. Taking the same lock again from inside `fn` (same async context)
 * throws `invalid_argument` at once instead of deadlocking: the lock is not reentrant.
 *
 * Defaults: `timeoutMs 10 000`, `staleMs 30 000`, `retryMs 20` (jittered, growing).
 * Throws `unavailable` naming `lockPath` when the lock is still held after `timeoutMs`,
 * `invalid_argument` for bad options, the file system's error unchanged when the lock
 * file cannot be created (e.g. `ENOENT` for a missing folder), and whatever `fn` throws.
 */
export async function withFileLock<T>(
  lockPath: string,
  fn: () => T | Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  if (typeof lockPath !== 'string' || lockPath === '') {
    throw errors.invalid('withFileLock: lockPath must be a non-empty string');
  }
  if (typeof fn !== 'function') throw errors.invalid('withFileLock: fn must be a function');
  const timeoutMs = checkOption(options.timeoutMs, 'timeoutMs', 0) ?? DEFAULT_TIMEOUT_MS;
  const staleMs = checkOption(options.staleMs, 'staleMs', 1) ?? DEFAULT_STALE_MS;
  const retryMs = checkOption(options.retryMs, 'retryMs', 1) ?? DEFAULT_RETRY_MS;
  const key = resolve(lockPath);
  const outer = registry.context.getStore() ?? [];
  if (outer.some((h) => h.key === key && h.active)) {
    throw errors.invalid(
      `withFileLock: "${lockPath}" is already held by this call chain; the lock is not reentrant`,
    );
  }
  const deadline = Date.now() + timeoutMs;
  await acquireMutex(key, lockPath, timeoutMs);
  const holding: Holding = { key, active: true };
  try {
    const held = await acquireFile(lockPath, { deadline, timeoutMs, staleMs, retryMs });
    try {
      return await registry.context.run([...outer, holding], fn);
    } finally {
      holding.active = false;
      await held.release();
    }
  } finally {
    holding.active = false;
    releaseMutex(key);
  }
}

// ---------------------------------------------------------------------------------------
// In-process mutex, one per resolved path.

function acquireMutex(key: string, lockPath: string, timeoutMs: number): Promise<void> {
  let m = registry.mutexes.get(key);
  if (!m) {
    m = { held: false, waiters: [] };
    registry.mutexes.set(key, m);
  }
  if (!m.held) {
    m.held = true;
    return Promise.resolve();
  }
  const mutex = m;
  return new Promise<void>((resolvePromise, reject) => {
    const waiter: Waiter = { resolve: resolvePromise, reject, timer: undefined };
    waiter.timer = setTimeout(() => {
      const i = mutex.waiters.indexOf(waiter);
      if (i >= 0) mutex.waiters.splice(i, 1);
      reject(
        errors.unavailable(
          `lock "${lockPath}" is held by this process; gave up after ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    mutex.waiters.push(waiter);
  });
}

function releaseMutex(key: string): void {
  const m = registry.mutexes.get(key);
  if (!m) return;
  const next = m.waiters.shift();
  if (next) {
    clearTimeout(next.timer);
    next.resolve(); // ownership passes straight to the next waiter
    return;
  }
  m.held = false;
  registry.mutexes.delete(key);
}

// ---------------------------------------------------------------------------------------
// The lock file.

interface HeldLock {
  release(): Promise<void>;
}

interface AcquireOptions {
  deadline: number;
  timeoutMs: number;
  staleMs: number;
  retryMs: number;
}

async function acquireFile(lockPath: string, o: AcquireOptions): Promise<HeldLock> {
  const token = randomUUID();
  for (let attempt = 0; ; attempt++) {
    const fd = createLockFileSync(lockPath, lockFileContent(token));
    if (fd !== undefined) {
      const held = holdLock(lockPath, fd, o);
      if (held) return held;
      continue;
    }

    const seen = await inspect(lockPath);
    // After breaking a stale lock, try to create ours again right away.
    if (seen && isStale(seen, o.staleMs) && (await breakIfStill(lockPath, seen, o.staleMs)))
      continue;
    const now = Date.now();
    if (now >= o.deadline) {
      throw errors.unavailable(
        `lock "${lockPath}" is held by ${describeHolder(seen)}; gave up after ${o.timeoutMs} ms`,
      );
    }
    if (!seen) continue; // released between our open and our read
    const grown = o.retryMs * 1.5 ** Math.min(attempt, 8);
    const delay = Math.min(grown, o.retryMs * 10) * (0.5 + Math.random());
    await sleep(Math.max(1, Math.min(delay, o.deadline - now)));
  }
}

function holdLock(lockPath: string, fd: number, o: AcquireOptions): HeldLock | undefined {
  // While we keep the descriptor open the inode cannot be reused, so "the file at
  // lockPath has our inode" means "it is still our lock" (a broken and re-created lock
  // is a new inode).
  const own = fstatSync(fd);
  if (own.nlink === 0) {
    // Broken (judged stale) between our create and now: not ours any more; try again.
    closeSync(fd);
    return undefined;
  }
  // Refresh through our own descriptor: if the file was broken and replaced meanwhile, we
  // touch the orphaned inode, never the new holder's file.
  let refreshing: Promise<void> | undefined;
  const timer = setInterval(
    () => {
      if (refreshing !== undefined) return;
      const now = new Date();
      refreshing = new Promise<void>((done) => futimes(fd, now, now, () => done())).finally(() => {
        refreshing = undefined;
      });
    },
    Math.max(1, o.staleMs / 3),
  );
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      // Never close the descriptor under an in-flight futimes: the number could be reused.
      if (refreshing !== undefined) await refreshing;
      // Unlink the file at `lockPath` only while it is still our inode: if we were judged
      // stale (blocked for longer than `staleMs`) it may have been broken and re-created by a
      // new holder, whose lock must stay. A tiny window remains between this stat and the
      // unlink in which a breaker could replace it — but only if our lock was stale, i.e.
      // we had already stalled past `staleMs`. Best effort: if the unlink fails, the file
      // goes stale and is broken later.
      try {
        const now = statSync(lockPath);
        if (now.ino === own.ino && now.dev === own.dev) unlinkSync(lockPath);
      } catch {
        // see above
      }
      try {
        closeSync(fd);
      } catch {
        // already closed; nothing held
      }
    },
  };
}

interface SeenLock {
  ino: number;
  dev: number;
  mtimeMs: number;
  content: string;
  info: FileLockInfo | undefined;
}

async function inspect(lockPath: string): Promise<SeenLock | undefined> {
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(lockPath, constants.O_RDONLY);
    const st = await handle.stat();
    const content = await handle.readFile('utf8');
    return { ino: st.ino, dev: st.dev, mtimeMs: st.mtimeMs, content, info: parseInfo(content) };
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  } finally {
    await handle?.close().catch(() => {});
  }
}

function parseInfo(content: string): FileLockInfo | undefined {
  try {
    const v = JSON.parse(content) as Partial<FileLockInfo> | null;
    if (
      v &&
      typeof v === 'object' &&
      typeof v.pid === 'number' &&
      typeof v.hostname === 'string' &&
      typeof v.token === 'string'
    ) {
      const info: FileLockInfo = {
        pid: v.pid,
        hostname: v.hostname,
        token: v.token,
        acquiredAt: typeof v.acquiredAt === 'string' ? v.acquiredAt : '',
      };
      // Older versions wrote no namespace: unknown, so judged by the mtime only.
      if (typeof v.pidNamespace === 'string') info.pidNamespace = v.pidNamespace;
      return info;
    }
  } catch {
    // A holder that crashed between creating and writing leaves an empty file: only the
    // mtime rule can judge it.
  }
  return undefined;
}

let cachedHostname: string | undefined;

/**
 * This host's name, read once per process (it is a system call, and a lock is taken on
 * every commit). A host renamed while we run only makes our locks and theirs look
 * foreign to each other, which judges them by the mtime alone: slower, never unsafe.
 */
function ownHostname(): string {
  cachedHostname ??= hostname();
  return cachedHostname;
}

let cachedPidNamespace: { value: string | undefined } | undefined;

/** This process's pid namespace (Linux), e.g. `pid:[4026531836]`; undefined elsewhere. */
function ownPidNamespace(): string | undefined {
  if (!cachedPidNamespace) {
    let value: string | undefined;
    if (process.platform === 'linux') {
      try {
        value = readlinkSync('/proc/self/ns/pid');
      } catch {
        // /proc not mounted or restricted: unknown, so pids are never trusted.
      }
    }
    cachedPidNamespace = { value };
  }
  return cachedPidNamespace.value;
}

/** False when `pid` certainly does not run in our pid namespace; true when alive or unknown. */
function isPidAlive(pid: number): boolean {
  // 0 and negatives address process groups; never probe them.
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) !== 'ESRCH'; // EPERM: alive, owned by another user
  }
}

function isStale(seen: SeenLock, staleMs: number): boolean {
  const age = Date.now() - seen.mtimeMs;
  if (age > staleMs) return true;
  return seen.info !== undefined && holderIsGone(seen.info);
}

/**
 * True only when the lock file's content (as `withFileLock` writes it: JSON with `pid`,
 * `hostname`, `token` and, on Linux, `pidNamespace`) names a process that certainly no
 * longer runs: same host, same pid namespace, not this process, and `kill(pid, 0)` fails
 * with `ESRCH`. Anything unreadable, foreign or uncertain is `false` — the caller then
 * waits for the lock's age instead. This is the one liveness rule for every lock file a
 * sessionkit adapter writes; it never throws.
 */
export function isLockHolderGone(lockContent: string): boolean {
  const info = parseInfo(lockContent);
  return info !== undefined && holderIsGone(info);
}

function holderIsGone(info: FileLockInfo): boolean {
  return holderState(info) === 'gone';
}

/** What the content of a lock file says of its holder (see `lockHolderState`). */
export type LockHolderState = 'alive' | 'gone' | 'unknown';

/**
 * The one rule for judging who holds a lock file, from its content (as `withFileLock`
 * and `lockFileContent` write it): `gone` when it names a process of this host and pid
 * namespace, not this one, that `kill(pid, 0)` finds missing (`ESRCH`); `alive` when it
 * names this process, or a process of this host and namespace that runs; `unknown` for
 * anything else (empty or unreadable content, another host or namespace, a lock of an
 * older version without a namespace), which only its age can judge. Never throws.
 */
export function lockHolderState(lockContent: string): LockHolderState {
  const info = parseInfo(lockContent);
  return info === undefined ? 'unknown' : holderState(info);
}

function holderState(info: FileLockInfo): LockHolderState {
  if (info.hostname !== ownHostname()) return 'unknown';
  // A container sharing our hostname (or a lock of an older version, without the field) may
  // number its processes differently: a pid we cannot see may be alive there.
  const ns = ownPidNamespace();
  if (ns === undefined || info.pidNamespace !== ns) return 'unknown';
  // Our own pid: held by this process (a worker thread, another path to the same file),
  // or left by an earlier process that had the same pid (pid 1 in containers). Never
  // gone: only the mtime rule can tell those apart safely.
  if (info.pid === process.pid) return 'alive';
  if (!Number.isSafeInteger(info.pid) || info.pid <= 0) return 'unknown';
  return isPidAlive(info.pid) ? 'alive' : 'gone';
}

function sameLock(a: SeenLock, b: SeenLock): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.mtimeMs === b.mtimeMs && a.content === b.content;
}

/**
 * Unlinks the lock `judged` stale, if it is still exactly that file, and returns whether
 * it did. Runs under the breaker lock `<lockPath>.break` (`O_EXCL`), so only one breaker
 * acts at a time: a second breaker that judged the same lock finds it gone or replaced
 * by a fresh lock (another inode, token or mtime) and leaves it. When the breaker lock is
 * taken, returns false at once (the caller retries after its delay), removing the breaker
 * file first if it is older than `BREAKER_STALE_MS` (its owner crashed).
 *
 * Residual risk: a breaker stalled for longer than `BREAKER_STALE_MS` between taking the
 * breaker lock and unlinking (or two waiters removing one stale breaker file at the same
 * instant) can let two breakers act at once, and then the later one may remove a lock just
 * created by a new holder. Both need a process frozen for seconds inside a window of a few
 * microseconds.
 */
async function breakIfStill(lockPath: string, judged: SeenLock, staleMs: number): Promise<boolean> {
  const breakerPath = `${lockPath}.break`;
  const breakerToken = randomUUID();
  const handle = await createExclusive(breakerPath);
  if (!handle) {
    await removeStaleBreaker(breakerPath);
    return false;
  }
  try {
    await handle.writeFile(breakerToken);
  } catch (e) {
    // Ours, created a moment ago: nobody else may remove it yet.
    await handle.close().catch(() => {});
    await fsp.unlink(breakerPath).catch(() => {});
    throw e;
  }
  await handle.close().catch(() => {});
  try {
    const now = await inspect(lockPath);
    if (!now || !sameLock(judged, now) || !isStale(now, staleMs)) return false;
    try {
      await fsp.unlink(lockPath);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return false;
      throw e;
    }
    return true;
  } finally {
    // Only our own breaker file: if we stalled past BREAKER_STALE_MS it may be someone else's.
    try {
      if ((await fsp.readFile(breakerPath, 'utf8')) === breakerToken) await fsp.unlink(breakerPath);
    } catch {
      // Gone already, or unreadable: it goes stale and is removed by the next breaker.
    }
  }
}

/** Removes the breaker file when it is older than `BREAKER_STALE_MS`; best effort. */
async function removeStaleBreaker(breakerPath: string): Promise<void> {
  try {
    const st = await fsp.stat(breakerPath);
    if (Date.now() - st.mtimeMs > BREAKER_STALE_MS) await fsp.unlink(breakerPath);
  } catch {
    // Gone meanwhile, or not ours to remove: waiting then ends in `unavailable`.
  }
}

function describeHolder(seen: SeenLock | undefined): string {
  const info = seen?.info;
  if (!info) return 'an unknown holder';
  return `pid ${info.pid} on ${info.hostname} since ${info.acquiredAt || 'an unknown time'}`;
}
