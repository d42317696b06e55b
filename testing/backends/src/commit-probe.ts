// Which commit options a store takes, found by trying them: bindings whose writes need
// `truncate` or `operationId` skip (loudly) the tests that need them on an adapter that
// does not implement them yet, whatever its name.
import {
  type CommitInput,
  type FullStore,
  isSessionKitError,
  newSessionId,
} from '@sessionkit/core';

/**
 * Why `store`'s commit rejects `input` (the `invalid_argument` message), or `undefined` when
 * it takes it. Tried on a session of its own, deleted afterwards; any other error is thrown.
 */
export async function commitRejection(
  store: FullStore<unknown>,
  input: CommitInput<unknown>,
): Promise<string | undefined> {
  const id = `probe-${newSessionId()}`;
  await store.create({ id });
  try {
    await store.commit(id, input);
    return undefined;
  } catch (e) {
    if (isSessionKitError(e, 'invalid_argument')) return e.message;
    throw e;
  } finally {
    await store.delete(id);
  }
}
