// Creating a session: its folder and first snapshot, search text and index entry.

import { chmodSync, promises as fsp, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isSessionKitError, isValidId, newSessionId, type Session } from '@sessionkit/core';
import { errnoCode, fsyncDir, type HistoryLineage, planCreate } from '@sessionkit/core/adapter';
import { scanSessionDir } from '../format/paths.js';
import { entryOf, type HeaderJson, headerToJson } from '../format/records.js';
import { appendIndexRecords, putRecord } from '../index-log/append.js';
import { isEnoent } from '../io/fs-helpers.js';
import { writeSearchFile } from '../search/search-file.js';
import type { StoreContext } from '../store/context.js';
import { errors, missingSnapshot } from '../store/errors.js';
import { listSessionFolder } from './folder.js';
import { lockForWrite } from './lock.js';
import { writeSnapshot } from './snapshot.js';
import { readSessionTip } from './tip.js';

/**
 * Stores the new session `session` (validated by `prepareCreate`) by the kit's
 * `planCreate`, its lineage based on its parent's when the parent exists; returns its
 * stored header. Throws `exists`.
 */
export async function createSession(
  ctx: StoreContext,
  session: Session<unknown>,
): Promise<HeaderJson> {
  const { state, messages } = planCreate(session, await parentLineage(ctx, session.parentId));
  const header = headerToJson(state.header);
  await lockForWrite(ctx, session.id, () =>
    createSessionLocked(ctx, header, state.lineage, messages),
  );
  return header;
}

/**
 * Creates the session folder and its first snapshot, search file and index entry; the
 * caller holds the session lock. Throws `exists`, or `corrupt` when a commit log survives
 * without its snapshot (a damaged session, kept as it is).
 */
export async function createSessionLocked(
  ctx: StoreContext,
  header: HeaderJson,
  lineage: HistoryLineage,
  messages: unknown[],
): Promise<void> {
  const id = header.id;
  const sp = ctx.sessionPaths(id);
  // The common case, a new id, is one `mkdir`; only a folder that exists is looked into.
  const fresh = makeFolderIfNew(sp.dir);
  if (!fresh) {
    const names = listSessionFolder(sp.dir) ?? [];
    const scan = scanSessionDir(names);
    if (scan.snapshots.length > 0 || scan.legacy) throw errors.exists(id);
    // A commit log without its snapshot is a damaged session, not left-overs: keep it.
    if (scan.logs.length > 0) throw missingSnapshot(id, scan.logs);
    // Left-overs of a create killed before its snapshot: start clean.
    for (const name of names) await fsp.rm(join(sp.dir, name), { force: true, recursive: true });
    // Private again: a create killed between its `mkdir` and its `chmod` left the folder
    // as the umask made it. (Nobody removes it meanwhile: that takes the lock we hold.)
    if (process.platform !== 'win32') chmodSync(sp.dir, 0o700);
  }
  if (ctx.options.sync) await fsyncDir(ctx.paths.sessions);
  await writeSnapshot(ctx, id, header, lineage, messages, undefined, fresh);
  await writeSearchFile(ctx, id, messages);
  await appendIndexRecords(ctx, [putRecord(entryOf(header, messages.length))], id);
}

/**
 * Makes the session folder `dir` (0700) with synchronous calls: its parent exists (the
 * store made it on open), so it is one `mkdir` and one `chmod` (the umask cannot narrow
 * it). True when this call made it; false when it exists already (its mode left as is).
 */
function makeFolderIfNew(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if (errnoCode(e) === 'EEXIST') return false;
    throw e;
  }
  if (process.platform !== 'win32') chmodSync(dir, 0o700);
  return true;
}

/**
 * The lineage of the session `parentId` names, `undefined` when there is none or it
 * does not exist (core's `createdLineage` then bases on 0). Reads metas only.
 */
export async function parentLineage(
  ctx: StoreContext,
  parentId: string | undefined,
): Promise<HistoryLineage | undefined> {
  if (parentId === undefined || !isValidId(parentId)) return undefined;
  try {
    return (await readSessionTip(ctx, parentId, 'reader')).lineage;
  } catch (e) {
    if (isSessionKitError(e, 'not_found') || isSessionKitError(e, 'corrupt')) return undefined;
    throw e;
  }
}

/** A new session id whose folder does not exist. */
export async function freshSessionId(ctx: StoreContext): Promise<string> {
  for (;;) {
    const id = newSessionId();
    try {
      await fsp.stat(ctx.sessionPaths(id).dir);
    } catch (e) {
      if (isEnoent(e)) return id;
      throw e;
    }
  }
}
