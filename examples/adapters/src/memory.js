// @sessionkit/memory: every capability in process memory, for tests and prototypes.
// Two stores on one MemoryBackend behave like two processes on one database: this shows
// the optimistic concurrency every sessionkit store enforces (`expectedRevision`).
import { isSessionKitError, newSession } from '@sessionkit/core';
import { MemoryBackend, MemoryStore } from '@sessionkit/memory';

const backend = new MemoryBackend();
const tabA = new MemoryStore({ backend });
const tabB = new MemoryStore({ backend });

const session = await tabA.create(newSession({ folder: '/demo', title: 'Two tabs' }));
const seenByB = await tabB.load(session.id);

await tabA.commit(session.id, {
  expectedRevision: session.revision,
  append: [{ role: 'user', content: 'Sent from tab A' }],
});
console.log(`tab A committed: revision ${(await tabA.load(session.id)).revision}`);

try {
  // Tab B still holds revision 1: its write must not silently overwrite tab A's.
  await tabB.commit(session.id, {
    expectedRevision: seenByB.revision,
    append: [{ role: 'user', content: 'Sent from tab B' }],
  });
} catch (e) {
  if (!isSessionKitError(e) || e.code !== 'conflict') throw e;
  console.log(`tab B refused: ${e.code}`);
}
const final = await tabB.load(session.id);
console.log(`messages: ${final.messages.map((m) => m.content).join(' | ')}`);
await tabA.close();
await tabB.close();
