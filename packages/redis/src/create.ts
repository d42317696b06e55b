// create(): the kit's `planCreate`, then the record written by `insertRecord`.
import type { Session } from '@sessionkit/core';
import { planCreate, searchTextsOf } from '@sessionkit/core/adapter';
import { childrenOfOne } from './children.js';
import { decodeMessages } from './codec.js';
import type { StoreContext } from './context.js';
import { insertRecord, readState } from './session-io.js';
import { writeToken } from './write-ledger.js';

/**
 * Stores a new session from `create`'s validated input; its lineage is based on the
 * parent's when the parent exists. Returns it as `load` would. Throws `exists`, `aborted`
 * (before the first write).
 */
export async function createSession(
  ctx: StoreContext,
  session: Session<unknown>,
  signal?: AbortSignal,
): Promise<Session<unknown>> {
  const parentId = session.parentId;
  const parent =
    parentId === undefined ? undefined : await readState(ctx, parentId).catch(() => undefined);
  const { state, messages } = planCreate(session, parent?.lineage);
  const id = state.header.id;
  const texts = messages.map((m) => JSON.stringify(m));
  const record = {
    state,
    messages: texts,
    texts: searchTextsOf(messages),
    token: writeToken(),
    parentLife: parent?.life ?? '',
  };
  await insertRecord(ctx, record, 'create', signal);
  // What load returns: the messages as stored (JSON), the children the index knows.
  return {
    ...state.header,
    messages: decodeMessages(id, texts),
    children: await childrenOfOne(ctx, id),
  };
}
