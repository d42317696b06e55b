import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import { constants, promises as fsp } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { errorsFor } from '../errors.js';

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
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_STALE_MS = 30_000;
const DEFAULT_RETRY_MS = 20;

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

function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function checkOption(value: unknown, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw errors.invalid(`withFileLock: ${name} must be a number >= ${min}, got ${String(value)}`);
  }
  return value;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `fn` while holding an exclusive lock on `lockPath`, shared by every process of
 * this host (and by processes on other hosts that see the same file system, through
 * the mtime rule below), and returns what `fn` returns. The lock is released when `fn`
 * settles, whether it resolves or throws.
 *
 * The lock is the file `lockPath`, created with `O_CREAT | O_EXCL` and mode `0600`,
 * holding JSON `{pid, hostname, acquiredAt, token}`. While `fn` runs its mtime is
 * refreshed every `staleMs / 3`. A lock file left behind is broken when its holder's pid
 * is not alive on this host, or when its mtime is older than `staleMs`; breaking renames
 * it to a unique name first and checks it is still the same stale file before unlinking,
 * so two waiters cannot both break one lock and then both acquire. Release removes the
 * file only while it still holds this holder's token.
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
  const info: FileLockInfo = {
    pid: process.pid,
    hostname: hostname(),
    acquiredAt: new Date().toISOString(),
    token,
  };
  for (let attempt = 0; ; attempt++) {
    let handle: fsp.FileHandle | undefined;
    try {
      handle = await fsp.open(
        lockPath,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
        0o600,
      );
    } catch (e) {
      if (errorCode(e) !== 'EEXIST') throw e;
    }
    if (handle)
      return holdLock(lockPath, handle, { ...info, acquiredAt: new Date().toISOString() }, o);

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

async function holdLock(
  lockPath: string,
  handle: fsp.FileHandle,
  info: FileLockInfo,
  o: AcquireOptions,
): Promise<HeldLock> {
  try {
    await handle.chmod(0o600);
    await handle.writeFile(JSON.stringify(info));
  } catch (e) {
    await handle.close().catch(() => {});
    await fsp.rm(lockPath, { force: true }).catch(() => {});
    throw e;
  }
  // Refresh through our own descriptor: if the file was broken and replaced meanwhile, we
  // touch the orphaned inode, never the new holder's file.
  let refreshing: Promise<void> = Promise.resolve();
  const timer = setInterval(
    () => {
      const now = new Date();
      refreshing = handle.utimes(now, now).catch(() => {});
    },
    Math.max(1, o.staleMs / 3),
  );
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await refreshing;
      await handle.close().catch(() => {});
      // Best effort: if the unlink fails, the file goes stale and is broken later.
      await removeIf(lockPath, (content) => parseInfo(content)?.token === info.token).catch(
        () => {},
      );
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
    if (errorCode(e) === 'ENOENT') return undefined;
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
      return {
        pid: v.pid,
        hostname: v.hostname,
        token: v.token,
        acquiredAt: typeof v.acquiredAt === 'string' ? v.acquiredAt : '',
      };
    }
  } catch {
    // A holder that crashed between creating and writing leaves an empty file: only the
    // mtime rule can judge it.
  }
  return undefined;
}

/** False when `pid` certainly does not run on this host; true when alive or unknown. */
function isPidAlive(pid: number): boolean {
  // 0 and negatives address process groups; never probe them.
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errorCode(e) !== 'ESRCH'; // EPERM: alive, owned by another user
  }
}

function isStale(seen: SeenLock, staleMs: number): boolean {
  if (Date.now() - seen.mtimeMs > staleMs) return true;
  const info = seen.info;
  if (!info || info.hostname !== hostname()) return false;
  // Our own pid: held by this process (a worker thread, another path to the same file),
  // or left by an earlier process that had the same pid (pid 1 in containers). Only the
  // mtime rule can tell those apart safely.
  if (info.pid === process.pid) return false;
  return !isPidAlive(info.pid);
}

function sameLock(a: SeenLock, b: SeenLock): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.content === b.content;
}

async function breakIfStill(lockPath: string, judged: SeenLock, staleMs: number): Promise<boolean> {
  return removeIf(lockPath, (content, st) => {
    const now: SeenLock = {
      ino: st.ino,
      dev: st.dev,
      mtimeMs: st.mtimeMs,
      content,
      info: parseInfo(content),
    };
    return sameLock(judged, now) && isStale(now, staleMs);
  });
}

/**
 * Removes `lockPath` only if `shouldRemove` holds for the very file removed: renames it to a
 * unique name first (so no one else can act on it any more), checks, then unlinks it or
 * puts it back. Returns whether it removed the file.
 */
async function removeIf(
  lockPath: string,
  shouldRemove: (content: string, st: { ino: number; dev: number; mtimeMs: number }) => boolean,
): Promise<boolean> {
  const grave = `${lockPath}.${randomBytes(6).toString('hex')}.breaking`;
  try {
    await fsp.rename(lockPath, grave);
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return false; // already gone
    throw e;
  }
  let remove = false;
  try {
    const handle = await fsp.open(grave, constants.O_RDONLY);
    try {
      const st = await handle.stat();
      remove = shouldRemove(await handle.readFile('utf8'), st);
    } finally {
      await handle.close().catch(() => {});
    }
  } catch {
    remove = false;
  }
  if (remove) {
    await fsp.unlink(grave).catch(() => {});
    return true;
  }
  // Not ours to remove (a new holder got in between): put it back without clobbering.
  try {
    await fsp.link(grave, lockPath);
  } catch {
    // Someone created a new lock in the instant it was away; theirs stands.
  }
  await fsp.unlink(grave).catch(() => {});
  return false;
}

function describeHolder(seen: SeenLock | undefined): string {
  const info = seen?.info;
  if (!info) return 'an unknown holder';
  return `pid ${info.pid} on ${info.hostname} since ${info.acquiredAt || 'an unknown time'}`;
}
