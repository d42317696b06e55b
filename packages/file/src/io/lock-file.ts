// Lock files by core's rules (`@sessionkit/core/adapter`'s `lockFileContent`,
// `createLockFileSync` and `lockHolderState`): creating one for a lease, and telling
// whether the holder a lock file names is certainly alive (listing then trusts the index
// entry of its session).

import {
  closeSync,
  fstatSync,
  futimesSync,
  openSync,
  readSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { createLockFileSync, lockFileContent, lockHolderState } from '@sessionkit/core/adapter';

/**
 * Creates `path` with `O_CREAT | O_EXCL`, mode 0600, holding the content core's
 * `withFileLock` writes, so every process (and every version of this package) treats it
 * as that lock: it waits for it, and breaks it when its holder is gone or its mtime is
 * older than its stale time. Its mtime is set to `mtime` through the descriptor before it
 * is closed (a lease dates its lock a term ahead: no second lookup of the path). Returns
 * the file's inode, or `undefined` when it exists.
 */
export function createLockFile(path: string, token: string, mtime: Date): number | undefined {
  const fd = createLockFileSync(path, lockFileContent(token));
  if (fd === undefined) return undefined;
  try {
    futimesSync(fd, mtime, mtime);
    return Number(fstatSync(fd).ino);
  } catch (e) {
    // Just created by us and not yet used: nobody else may hold it.
    try {
      unlinkSync(path);
    } catch {
      // it goes stale and is broken later
    }
    throw e;
  } finally {
    closeSync(fd);
  }
}

/** What `LockJudge` remembers of one lock file: its inode and content. */
interface Judged {
  ino: number;
  content: string;
}

/**
 * Tells whether the holder of a lock file is certainly alive: core's `lockHolderState`
 * says `alive` and the lock was refreshed within `staleMs`. Anything else (a holder gone
 * or unknown: an empty or unreadable file, another host or namespace; an old mtime) is
 * not. Remembers each file's content by inode, so a later call costs one `stat` and the
 * liveness check.
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
      judged = { ino, content: readContent(path) };
      if (this.#seen.size >= 8192) this.#seen.clear();
      this.#seen.set(path, judged);
    }
    return lockHolderState(judged.content) === 'alive';
  }
}

/** The first KiB of a lock file (its whole content), `''` when it cannot be read. */
function readContent(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const buf = Buffer.alloc(1024);
    let done = 0;
    for (;;) {
      const n = readSync(fd, buf, done, buf.length - done, done);
      done += n;
      if (n === 0 || done >= buf.length) break;
    }
    return buf.subarray(0, done).toString('utf8');
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}
