// @sessionkit/postgres: a store on your own pg Pool (borrowed: closing the store leaves
// the pool to you). Each schema is a separate store; migrations run on first open.
// DATABASE_URL picks the server (default the local test database); SESSIONKIT_EXAMPLE_SCHEMA
// the schema (default "sessionkit_example").
import { newSession } from '@sessionkit/core';
import { PostgresStore } from '@sessionkit/postgres';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
});
pool.on('error', (e) => console.error('idle pg client failed:', e.message)); // pg requires a listener

const schema = process.env.SESSIONKIT_EXAMPLE_SCHEMA || 'sessionkit_example';
const store = await PostgresStore.fromPool(pool, { schema });
try {
  const session = await store.create(newSession({ folder: '/support', title: 'Refund request' }));
  await store.commit(session.id, {
    expectedRevision: session.revision,
    append: [
      { role: 'user', content: 'Order 1042 arrived broken.' },
      { role: 'assistant', content: 'A refund for order 1042 is on its way.' },
    ],
    increment: { turnCount: 1, tokenCount: 96 },
  });
  // Listing and search read summaries and search rows, never the message bodies.
  const hits = await store.list({ folder: '/support', query: 'order 1042' });
  console.log(`schema ${schema}: search found ${hits.some((s) => s.id === session.id)}`);
  // Branch to try another reply without touching the original conversation.
  const branch = await store.branch(session.id, 1);
  await store.commit(branch.id, {
    append: [{ role: 'assistant', content: 'Would you prefer a replacement?' }],
  });
  const tree = await store.load(session.id);
  console.log(`branch ${branch.id} of ${session.id}: children ${tree.children.length}`);
} finally {
  await store.close();
  await pool.end();
}
