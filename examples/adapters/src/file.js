// @sessionkit/file: the embedded default. Durable local files, safe for several processes:
// a second store on the same folder (another process, or a restart) sees every
// acknowledged write. SESSIONKIT_EXAMPLE_DIR picks the folder (default ./.sessions).
import { newSession } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';

const dir = process.env.SESSIONKIT_EXAMPLE_DIR || './.sessions';

const writer = new FileStore({ dir });
const session = await writer.create(newSession({ folder: '/demo', title: 'Survives restarts' }));
await writer.commit(session.id, {
  expectedRevision: session.revision,
  append: [
    { role: 'user', content: 'Remember the build flags.' },
    { role: 'assistant', content: 'Saved: --release --locked.' },
  ],
  increment: { turnCount: 1 },
});
await writer.close();

// A new store on the same folder: what a restarted process sees.
const reader = new FileStore({ dir });
const loaded = await reader.load(session.id);
console.log(`reopened ${session.id}: ${loaded.messages.length} messages, ${loaded.turnCount} turn`);
const [last] = await reader.loadMessages(session.id, { last: 1 });
console.log(`last message: ${last.content}`);
const found = await reader.list({ query: 'release --locked' });
console.log(`search found: ${found.some((s) => s.id === session.id)}`);
await reader.close();
