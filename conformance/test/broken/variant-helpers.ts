// What the broken variants share: a yield to the event loop (where a plausible bug lets
// another call in) and the memory adapter's stored record of a session.
import type { MemoryStore } from '@sessionkit/memory';

/** Resolves after the event loop has run once: the gap a racing call slips into. */
export const tick = () => new Promise<void>((r) => setImmediate(r));

/** The record of `id` in the memory adapter's backend (the caller just wrote it). */
export const recordOf = (inner: MemoryStore, id: string) => inner.backend.records.get(id)!;
