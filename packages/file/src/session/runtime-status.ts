// A session's runtime status (`status.json`), written atomically beside the transcript
// and never touching it.

import { promises as fsp } from 'node:fs';
import { isEnoent } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';
import { errors } from '../store/errors.js';
import { assertSessionExists } from './folder.js';
import { lockForWrite } from './lock.js';

/** Writes `text` (core's `runtimeStatusText`) as the session's status, under its lock. */
export async function writeRuntimeStatusText(
  ctx: StoreContext,
  id: string,
  text: string,
): Promise<void> {
  const sp = ctx.sessionPaths(id);
  await lockForWrite(ctx, id, async () => {
    await assertSessionExists(ctx, id);
    await ctx.writeAtomic(sp.status, text);
  });
}

/**
 * The stored runtime status's JSON text (the base class parses it: `corrupt` when it is
 * not JSON), or `null` when none was saved. Throws `not_found`.
 */
export async function readRuntimeStatusText(ctx: StoreContext, id: string): Promise<string | null> {
  await assertSessionExists(ctx, id);
  let text: string;
  try {
    text = await fsp.readFile(ctx.sessionPaths(id).status, 'utf8');
  } catch (e) {
    if (isEnoent(e)) {
      await assertSessionExists(ctx, id);
      return null;
    }
    throw e;
  }
  try {
    JSON.parse(text);
  } catch (cause) {
    throw errors.corrupt(id, 'status.json is not valid JSON', cause);
  }
  return text;
}
