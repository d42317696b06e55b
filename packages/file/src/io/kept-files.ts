// The descriptor cache: append descriptors (commit logs, search files, the index) kept open
// between writes, so a commit needs no open/close and a writer can trust an inode number.

import { readFileSync } from 'node:fs';
import { closeQuietly } from './fs-helpers.js';

/**
 * Append descriptors a store keeps open at most (commit logs, search files, the index):
 * two per session a writer cycles through, so enough for up to 4,096 live sessions where
 * the process may open that many files (Linux: a third of its limit, which Node raises to
 * the hard limit at start, so the rest stays for the application; 128 where it cannot be
 * read). A writer cycling through more sessions than fit opens and closes two files per
 * commit.
 */
export const KEPT_FILES = keptFilesBound();

/** Share of the kept descriptors closed at once when the cache is full (see `keep`). */
const EVICT_SHARE = 1 / 16;

function keptFilesBound(): number {
  if (process.platform !== 'linux') return 128;
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const limit = m ? Number(m[1]) : Number.NaN;
    return Number.isFinite(limit) ? Math.max(128, Math.min(8192, Math.floor(limit / 3))) : 128;
  } catch {
    return 128;
  }
}

/**
 * Append descriptors kept open between writes, by path, least recently used first. A
 * descriptor is taken out while in use (`take`) and put back after (`keep`), so
 * `dropAll()` (the store's `close()`) never closes one under a pending `fdatasync`. Each is
 * used only after checking that its inode is still the file at its path (see the callers).
 */
export class KeptFiles {
  readonly #files = new Map<string, { fd: number; ino: number }>();
  readonly #bound: number;

  /** `bound`: descriptors kept at most (`KEPT_FILES`; tests use a small one). */
  constructor(bound = KEPT_FILES) {
    this.#bound = bound;
  }

  /** The inode of the descriptor kept for `path`, if any (it stays kept). */
  inoOf(path: string): number | undefined {
    return this.#files.get(path)?.ino;
  }

  /**
   * Takes the kept descriptor of `path` out of the cache (the caller owns it until `keep`
   * or `closeSync`) if its inode is `ino`; a descriptor of another inode (the file was
   * replaced or removed) is closed. `undefined` when there is none.
   */
  take(path: string, ino: number): number | undefined {
    const f = this.#files.get(path);
    if (!f) return undefined;
    this.#files.delete(path);
    if (f.ino === ino) return f.fd;
    closeQuietly(f.fd);
    return undefined;
  }

  /**
   * Returns a descriptor to the cache, or closes it when `closeInstead` (the store is
   * closed) or on Windows. When the cache is full the least recently used sixteenth is
   * closed at once: the map's oldest entries sit behind the holes every `take` leaves,
   * which a walk from its start passes over, so evicting one at a time would walk them
   * on every commit of a writer cycling through more sessions than fit.
   */
  keep(path: string, fd: number, ino: number, closeInstead: boolean): void {
    this.drop(path);
    if (closeInstead || process.platform === 'win32') {
      closeQuietly(fd);
      return;
    }
    this.#files.set(path, { fd, ino });
    if (this.#files.size <= this.#bound) return;
    let excess = this.#files.size - Math.floor(this.#bound * (1 - EVICT_SHARE));
    for (const [oldest, f] of this.#files) {
      if (excess-- <= 0) break;
      this.#files.delete(oldest);
      closeQuietly(f.fd);
    }
  }

  /** True when `path` is kept open as inode `ino` (so that number cannot be reused). */
  isPinned(path: string, ino: number): boolean {
    return this.#files.get(path)?.ino === ino;
  }

  /** Closes the descriptor kept for `path`, if any. */
  drop(path: string): void {
    const f = this.#files.get(path);
    if (!f) return;
    this.#files.delete(path);
    closeQuietly(f.fd);
  }

  /** Closes every kept descriptor (those taken out are closed by their users). */
  dropAll(): void {
    for (const path of [...this.#files.keys()]) this.drop(path);
  }
}
