import { randomUUID } from 'node:crypto';
import { constants, promises as fsp } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errnoCode } from './errno.js';

/** Options of `writeFileAtomic`. */
export interface WriteFileAtomicOptions {
  /** Permission bits of the written file, applied exactly (not masked by the umask). Default `0o600`. */
  mode?: number;
  /** fsync the containing folder after the rename so the new name itself is durable. Default `true`. */
  fsyncDir?: boolean;
}

// Error codes meaning "this platform or file system cannot fsync a folder" (Windows cannot
// open one, some network and FUSE file systems refuse): durability is then the OS's call,
// not an error of ours.
const DIR_FSYNC_UNSUPPORTED = new Set(['EISDIR', 'EPERM', 'EACCES', 'EINVAL', 'ENOTSUP', 'EBADF']);
// Windows: a virus scanner or indexer may hold the target open for a moment.
const RENAME_RETRYABLE = new Set(['EPERM', 'EACCES', 'EBUSY']);

/**
 * A fresh temp path for writing `path` atomically: `.<name>.<random>.tmp` in the same folder
 * as `path` (so a rename onto `path` stays on one file system), hidden, and unique (the 122
 * random bits of a UUID, as 32 hex digits: Node draws UUIDs from a cached entropy pool, a
 * tenth of what a `randomBytes` call costs, and every atomic write takes one). `<name>` is
 * the base name of `path`, cut by whole characters to at most 200 UTF-8 bytes so the temp
 * name fits the 255-byte name limit of common file systems. Pure: creates nothing; create
 * the file with `O_EXCL` to be safe against a collision.
 */
export function tempPathFor(path: string): string {
  let name = basename(path);
  while (Buffer.byteLength(name, 'utf8') > 200) name = Array.from(name).slice(0, -1).join('');
  return join(dirname(path), `.${name}.${randomUUID().replaceAll('-', '')}.tmp`);
}

/**
 * fsyncs a folder so that entries created, renamed or removed in it survive a power loss.
 * A no-op where the platform cannot fsync folders (Windows, some network file systems);
 * real I/O errors (`EIO`, `ENOENT` …) are thrown unchanged.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(dir, constants.O_RDONLY);
    await handle.sync();
  } catch (e) {
    if (!DIR_FSYNC_UNSUPPORTED.has(errnoCode(e) ?? '')) throw e;
  } finally {
    await handle?.close().catch(() => {});
  }
}

/**
 * Replaces the file at `path` with `data` atomically: readers see either the old content or
 * the new content, never a mix or a truncated file, also after a crash or power loss.
 *
 * How: writes a fresh temp file `.<name>.<random>.tmp` in the same folder (created with
 * `O_EXCL` and `mode`, so it is never shared and never readable by others), fsyncs it,
 * renames it over `path` and fsyncs the folder (unless `fsyncDir: false`). On any error
 * the temp file is removed and `path` keeps its previous content (or stays absent).
 *
 * Defaults: `mode 0o600`, `fsyncDir true`. The folder must exist (see `ensurePrivateDir`).
 * A symlink at `path` is replaced by the new file, not written through.
 * Throws the file system's error unchanged (`ENOENT` for a missing folder, `EACCES` …) so
 * callers can map it to their own error codes.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  if (typeof path !== 'string' || path === '') {
    throw new TypeError('writeFileAtomic: path must be a non-empty string');
  }
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
    throw new TypeError('writeFileAtomic: data must be a string or a Uint8Array');
  }
  const mode = options.mode ?? 0o600;
  const tmp = tempPathFor(path);
  let handle: fsp.FileHandle | undefined;
  let created = false;
  try {
    handle = await fsp.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
    created = true;
    // The umask may have cleared bits of `mode` at creation; set exactly what was asked.
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await renameWithRetry(tmp, path);
    created = false;
  } catch (e) {
    await handle?.close().catch(() => {});
    if (created) await fsp.rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
  if (options.fsyncDir !== false) await fsyncDir(dirname(path));
}

async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fsp.rename(from, to);
      return;
    } catch (e) {
      if (
        process.platform !== 'win32' ||
        attempt >= 10 ||
        !RENAME_RETRYABLE.has(errnoCode(e) ?? '')
      )
        throw e;
      await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
    }
  }
}

/**
 * Creates `dir` and any missing parents (like `mkdir -p`), each folder it creates with mode
 * exactly `0o700` (applied with `chmod` after creation, as the umask may have cleared bits),
 * so new session folders are never readable by other users. A folder that already existed,
 * `dir` itself or a parent, is left exactly as it is: its mode is never changed, so pointing
 * a store at an existing folder (e.g. a project folder or the working directory) does not
 * tighten it. Modes are not applied on Windows, where POSIX modes do not apply.
 *
 * Throws `ENOTDIR` when `dir` (or a parent) exists and is not a folder, and other file
 * system errors unchanged.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  if (typeof dir !== 'string' || dir === '') {
    throw new TypeError('ensurePrivateDir: dir must be a non-empty string');
  }
  const target = resolve(dir);
  const missing = await missingFolders(target);
  // `mkdir` reports the first folder it created itself; folders above it were made by a
  // concurrent caller between our check and now, and are not ours to chmod either.
  const first = await fsp.mkdir(target, { recursive: true, mode: 0o700 });
  const st = await fsp.stat(target);
  if (!st.isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, '${dir}'`), {
      code: 'ENOTDIR',
      path: dir,
    });
  }
  if (first === undefined || process.platform === 'win32') return;
  const created = missing.slice(0, missing.indexOf(resolve(first)) + 1);
  // Parents first.
  for (const folder of created.reverse()) await fsp.chmod(folder, 0o700);
}

/** The components of absolute `target` that do not exist yet, deepest first. */
async function missingFolders(target: string): Promise<string[]> {
  const missing: string[] = [];
  for (let p = target; ; ) {
    try {
      await fsp.stat(p);
      return missing;
    } catch (e) {
      // ENOTDIR and the like: `mkdir` below reports it.
      if (errnoCode(e) !== 'ENOENT') return missing;
    }
    missing.push(p);
    const parent = dirname(p);
    if (parent === p) return missing;
    p = parent;
  }
}
