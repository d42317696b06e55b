// A session's folder: listing it, and whether it holds a session.

import { promises as fsp, readdirSync } from 'node:fs';
import { scanSessionDir } from '../format/paths.js';
import { isEnoent } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';
import { errors, missingSnapshot } from '../store/errors.js';

/**
 * How often a lockless reader starts over when a writer replaced the snapshot it was
 * reading (a fold or `replace` renamed a new one in and removed the old files).
 */
export const READ_ATTEMPTS = 50;

/** The names in the session folder `dir`, or `undefined` when there is no such folder. */
export function listSessionFolder(dir: string): string[] | undefined {
  try {
    return readdirSync(dir);
  } catch (e) {
    if (isEnoent(e)) return undefined;
    throw e;
  }
}

/**
 * The newest snapshot revision in the session folder `dir`, or `undefined` for a format-1
 * session (a `session.json`, no snapshot). Throws `not_found` without a folder and
 * `corrupt` for commit logs without any snapshot.
 */
export function newestSnapshot(id: string, dir: string): number | undefined {
  const names = listSessionFolder(dir);
  if (!names) throw errors.notFound(id);
  const scan = scanSessionDir(names);
  const snapRev = scan.snapshots[scan.snapshots.length - 1];
  if (snapRev === undefined && !scan.legacy) throw missingSnapshot(id, scan.logs);
  return snapRev;
}

/** Throws `not_found` unless the session has a snapshot (or a format-1 `session.json`). */
export async function assertSessionExists(ctx: StoreContext, id: string): Promise<void> {
  let names: string[];
  try {
    names = await fsp.readdir(ctx.sessionPaths(id).dir);
  } catch (e) {
    if (isEnoent(e)) throw errors.notFound(id);
    throw e;
  }
  const scan = scanSessionDir(names);
  if (scan.snapshots.length === 0 && !scan.legacy) throw errors.notFound(id);
}
