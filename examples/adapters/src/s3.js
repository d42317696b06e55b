// @sessionkit/s3: conversations in object storage, with real concurrency control. Every
// commit is a new object created with `If-None-Match: *`, so of two writers exactly one
// gets a revision; the store checks at open that the server enforces that (MinIO, R2 and
// AWS S3 do). Point it at yours with SESSIONKIT_EXAMPLE_S3_URL, for example
// `s3://my-bucket/agents?endpoint=http://127.0.0.1:9000&region=us-east-1&forcePathStyle=true`,
// and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
import { isSessionKitError, newSession, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { storeAdapter } from '@sessionkit/s3';

registerStoreAdapter(storeAdapter);
const url = process.env.SESSIONKIT_EXAMPLE_S3_URL;
if (!url) {
  console.error('set SESSIONKIT_EXAMPLE_S3_URL to an s3://bucket/prefix URL (see the comment)');
  process.exit(2);
}

// Two stores, as two serverless invocations would open them.
const first = await openStore(url);
const second = await openStore(url);
try {
  const session = await first.create(newSession({ folder: '/lambda', title: 'Invoice 77' }));
  // Both read revision 1, both try to append: one wins, the other gets `conflict`.
  const results = await Promise.allSettled(
    [first, second].map((store, i) =>
      store.commit(session.id, {
        expectedRevision: session.revision,
        append: [{ role: 'user', content: `Answer from invocation ${i + 1}` }],
      }),
    ),
  );
  const won = results.filter((r) => r.status === 'fulfilled').length;
  const conflicts = results.filter(
    (r) => r.status === 'rejected' && isSessionKitError(r.reason, 'conflict'),
  ).length;
  console.log(`one winner: ${won === 1 && conflicts === 1}`);
  const loaded = await second.load(session.id);
  console.log(`stored messages: ${loaded.messages.length}`);
  const listed = await second.list({ folder: '/lambda', query: 'invoice 77' });
  console.log(`listed: ${listed.some((s) => s.id === session.id)}`);
} finally {
  await first.close();
  await second.close();
}
