import { randomBytes } from 'node:crypto';
import { constants, promises as fsp } from 'node:fs';
import { basename, dirname, join } from 'node:path';

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

function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

// File names are limited to 255 bytes on common file systems; keep the temp name within it.
function tempNameFor(path: string): string {
  let name = basename(path);
  while (Buffer.byteLength(name, 'utf8') > 200) name = Array.from(name).slice(0, -1).join('');
  return join(dirname(path), `.${name}.${randomBytes(8).toString('hex')}.tmp`);
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
    if (!DIR_FSYNC_UNSUPPORTED.has(errorCode(e) ?? '')) throw e;
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
  const tmp = tempNameFor(path);
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
        !RENAME_RETRYABLE.has(errorCode(e) ?? '')
      )
        throw e;
      await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
    }
  }
}

/**
 * Creates `dir` and any missing parents with mode `0o700` (like `mkdir -p`). When `dir`
 * already exists and belongs to the current user, its mode is set to `0o700` so session
 * data is never readable by other users; a folder owned by someone else is left as it is.
 * Ownership and modes are not checked on Windows, where POSIX modes do not apply.
 *
 * Throws `ENOTDIR` when `dir` (or a parent) exists and is not a folder, and other file
 * system errors unchanged.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  if (typeof dir !== 'string' || dir === '') {
    throw new TypeError('ensurePrivateDir: dir must be a non-empty string');
  }
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await fsp.stat(dir);
  if (!st.isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, '${dir}'`), {
      code: 'ENOTDIR',
      path: dir,
    });
  }
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return;
  if (st.uid === process.getuid() && (st.mode & 0o777) !== 0o700) await fsp.chmod(dir, 0o700);
}
