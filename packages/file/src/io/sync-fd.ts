import * as fs from 'node:fs';
import { promisify } from 'node:util';

const fdatasync = promisify(fs.fdatasync);

/**
 * A file descriptor whose small operations (open, stat, read, write, truncate, close) are
 * synchronous system calls — microseconds on a local disk, where a thread-pool round trip
 * per call would cost more than the call — and whose `datasync` runs off the event loop.
 * The methods return promises so callers read like `fs.promises` code.
 */
export interface Fd {
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  write(data: Uint8Array): Promise<void>;
  truncate(length: number): Promise<void>;
  stat(): Promise<fs.Stats>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** Opens `path` like `fs.openSync` (throws its errors, e.g. `ENOENT`) as an `Fd`. */
export function openFd(path: string, flags: fs.OpenMode, mode?: number): Fd {
  const fd = fs.openSync(path, flags, mode);
  let open = true;
  return {
    async read(buffer, offset, length, position) {
      let done = 0;
      while (done < length) {
        const n = fs.readSync(fd, buffer, offset + done, length - done, position + done);
        if (n === 0) break;
        done += n;
      }
      return { bytesRead: done };
    },
    async write(data) {
      let done = 0;
      while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done);
    },
    async truncate(length) {
      fs.ftruncateSync(fd, length);
    },
    async stat() {
      return fs.fstatSync(fd);
    },
    datasync() {
      return fdatasync(fd);
    },
    async close() {
      if (!open) return;
      open = false;
      fs.closeSync(fd);
    },
  };
}

/**
 * Replaces `path` atomically (temp file in the same folder, mode 0600, rename) WITHOUT
 * fsync: readers and a process crash see the old or the new content, never a mix; a
 * machine crash may lose it. For derived data and for `sync: false` stores.
 */
export function replaceFileNoSync(path: string, tmp: string, data: string | Uint8Array): void {
  try {
    fs.writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, path);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}
