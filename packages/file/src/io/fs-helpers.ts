// Small file-system helpers shared by every part of the store.

import { closeSync, constants, fdatasync, promises as fsp, writeSync } from 'node:fs';
import { errnoCode } from '@sessionkit/core/adapter';

/** True for "no such file or folder" (core's `errnoCode`). */
export const isEnoent = (e: unknown): boolean => errnoCode(e) === 'ENOENT';

/** `fs.fdatasync` as a promise: one thread-pool round trip. */
export const fdatasyncAsync = (fd: number): Promise<void> =>
  new Promise<void>((resolvePromise, reject) =>
    fdatasync(fd, (e) => (e ? reject(e) : resolvePromise())),
  );

/** Writes all of `data` at the file's position (the end, for an `O_APPEND` descriptor). */
export function writeAll(fd: number, data: Uint8Array): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done);
}

/** Closes `fd`, ignoring errors: used on paths where nothing is held any more. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing held any more
  }
}

/** Whether `path` exists (other errors are thrown). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await fsp.access(path, constants.F_OK);
    return true;
  } catch (e) {
    if (isEnoent(e)) return false;
    throw e;
  }
}

/** `fsp.stat(path)`, or `undefined` when it does not exist. */
export async function statOrUndefined(path: string) {
  try {
    return await fsp.stat(path);
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
}
