// Lock files as core's `withFileLock` writes them ({pid, hostname, pidNamespace,
// acquiredAt, token}): writing one for a lease, and telling whether the holder a lock file
// names is certainly alive (listing then trusts the index entry of its session).

import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { errnoCode } from '@sessionkit/core/adapter';

let ownHost: string | undefined;
let ownNamespace: { value: string | undefined } | undefined;

/** This host's name (read once). */
function host(): string {
  ownHost ??= hostname();
  return ownHost;
}

/** This process's pid namespace on Linux (`pid:[…]`), read once; undefined elsewhere. */
function pidNamespace(): string | undefined {
  if (!ownNamespace) {
    let value: string | undefined;
    if (process.platform === 'linux') {
      try {
        value = readlinkSync('/proc/self/ns/pid');
      } catch {
        value = undefined;
      }
    }
    ownNamespace = { value };
  }
  return ownNamespace.value;
}

/**
 * Creates `path` with `O_CREAT | O_EXCL`, mode 0600, holding the content core's
 * `withFileLock` writes, so every process (and every version of this package) treats it
 * as that lock: it waits for it, and breaks it when its holder is gone or its mtime is
 * older than its stale time. Returns the file's inode, or `undefined` when it exists.
 */
export function createLockFile(path: string, token: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return undefined;
    throw e;
  }
  const content = JSON.stringify({
    pid: process.pid,
    hostname: host(),
    pidNamespace: pidNamespace(),
    acquiredAt: new Date().toISOString(),
    token,
  });
  try {
    writeSync(fd, content);
    return Number(fstatSync(fd).ino);
  } catch (e) {
    // Just created by us and not yet used: nobody else may hold it.
    try {
      unlinkSync(path);
    } catch {
      // it goes stale (empty or partial) and is broken later
    }
    throw e;
  } finally {
    closeSync(fd);
  }
}

/** What `LockJudge` remembers of one lock file. */
interface Judged {
  ino: number;
  mtimeMs: number;
  pid: number | undefined;
}

/**
 * Tells whether the holder of a lock file is certainly alive: a process of this host and
 * pid namespace that runs, whose lock was refreshed within `staleMs`. Anything else (an
 * empty or unreadable file, another host or namespace, a dead pid, an old mtime) is not.
 * Remembers each file's holder by inode, so a later call costs one `stat` and one
 * `kill(pid, 0)`.
 */
export class LockJudge {
  readonly #seen = new Map<string, Judged>();

  heldByLiveProcess(path: string, staleMs: number): boolean {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(path);
    } catch {
      this.#seen.delete(path);
      return false;
    }
    if (Date.now() - st.mtimeMs > staleMs) return false;
    const ino = Number(st.ino);
    let judged = this.#seen.get(path);
    if (!judged || judged.ino !== ino) {
      judged = { ino, mtimeMs: st.mtimeMs, pid: this.#holderPid(path) };
      if (this.#seen.size >= 8192) this.#seen.clear();
      this.#seen.set(path, judged);
    }
    return judged.pid !== undefined && isAlive(judged.pid);
  }

  /** The pid a lock file names when it is of this host and namespace, else undefined. */
  #holderPid(path: string): number | undefined {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return undefined;
    }
    try {
      const buf = Buffer.alloc(1024);
      const n = readSyncAll(fd, buf);
      const info = JSON.parse(buf.subarray(0, n).toString('utf8')) as Record<string, unknown>;
      const ns = pidNamespace();
      if (
        typeof info.pid === 'number' &&
        Number.isSafeInteger(info.pid) &&
        info.pid > 0 &&
        info.hostname === host() &&
        ns !== undefined &&
        info.pidNamespace === ns
      )
        return info.pid;
      return undefined;
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
  }
}

function readSyncAll(fd: number, buf: Buffer): number {
  let done = 0;
  for (;;) {
    const n = readSync(fd, buf, done, buf.length - done, done);
    if (n === 0 || done + n >= buf.length) return done + n;
    done += n;
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === 'EPERM';
  }
}
