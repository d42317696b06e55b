// A session's folder: listing it, and whether it holds a session.

import { promises as fsp, readdirSync } from 'node:fs';
import { scanSessionDir } from '../format/paths.js';
import { isEnoent } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';

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
