// Runtime status: a string key in the session's slot, kept apart from the transcript (a
// commit never touches it), written once per call through the write ledger.
import { throwIfAborted } from '@sessionkit/core/adapter';
import { call } from './calls.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { SCRIPTS } from './lua/index.js';
import { writeOnce, writeToken } from './write-ledger.js';

/** Stores `text` (validated JSON) as the status of `id`. Throws `not_found`, `unavailable`. */
export async function saveStatus(
  ctx: StoreContext,
  id: string,
  text: string,
  signal?: AbortSignal,
): Promise<void> {
  throwIfAborted(errors, signal, 'saveRuntimeStatus', id);
  const token = writeToken();
  const saved = await writeOnce<number>(
    ctx,
    SCRIPTS.saveStatus,
    id,
    ctx.keys.sessionKeyList(id),
    [text, token],
    token,
    `saving the status of "${id}"`,
  );
  if (saved !== 's') throw errors.notFound(id);
}

/** The stored status text of `id`, or `null` when none was saved. Throws `not_found`. */
export async function loadStatus(ctx: StoreContext, id: string): Promise<string | null> {
  const [exists, text] = await call<[number, string | null]>(
    ctx,
    SCRIPTS.loadStatus,
    ctx.keys.sessionKeyList(id),
    [],
    `loading the status of "${id}"`,
  );
  if (Number(exists) !== 1) throw errors.notFound(id);
  return typeof text === 'string' ? text : null;
}
