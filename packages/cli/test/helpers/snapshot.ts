// Everything a migration must keep, read straight from a store with the libraries (not
// through the command), so the tests check the copy independently of its own verifier.
import { isEventLog, isRuntimeStatusStore, listRows, type Store } from '@sessionkit/core';

/** id → the session without its revision, its runtime status and its events' content. */
export async function snapshot<M>(store: Store<M>): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for await (const row of listRows(store, { pageSize: 500, where: 'test' })) {
    const { revision: _r, ...session } = await store.load(row.id);
    const runtimeStatus = isRuntimeStatusStore(store)
      ? await store.loadRuntimeStatus(row.id)
      : null;
    const events = isEventLog(store)
      ? (await store.events(row.id)).map(({ sequence, type, payload }) => ({
          sequence,
          type,
          payload,
        }))
      : [];
    out.set(row.id, { session, runtimeStatus, events });
  }
  return out;
}
