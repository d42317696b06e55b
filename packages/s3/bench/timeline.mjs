#!/usr/bin/env node
// Per-commit latency around folds: 3 rounds of 70 one-message commits on one session (two
// folds each, at versions 33 and 65), each commit timed; prints the median of the commits
// that triggered a fold, of the two after each, and of all the others, in milliseconds.
// Bounded: 210 commits. Run: `pnpm --filter @sessionkit/s3 build && node bench/timeline.mjs`.
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { openS3Store } from '../dist/index.js';
import { startTestServer, testServerClient } from './test-server.mjs';

const server = await startTestServer('sessionkit-timeline-');
const client = testServerClient(server.endpoint);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)];
};
try {
  await client.send(new CreateBucketCommand({ Bucket: 'timeline' }));
  // s3rver ignores conditional headers: one writer here, so nothing is lost.
  const store = await openS3Store({ client, bucket: 'timeline', acceptLostUpdates: true });
  const folding = [];
  const after = [];
  const others = [];
  for (let round = 0; round < 3; round++) {
    const s = await store.create({
      id: `timeline-${round}`,
      messages: [{ role: 'user', content: 'm0' }],
    });
    for (let v = 2; v <= 71; v++) {
      const start = performance.now();
      await store.commit(s.id, {
        append: [{ role: 'user', content: `message ${v} ${'x'.repeat(900)}` }],
      });
      const ms = performance.now() - start;
      const folds = v === 33 || v === 65;
      if (folds) folding.push(ms);
      else if (v === 34 || v === 35 || v === 66 || v === 67) after.push(ms);
      else others.push(ms);
    }
    await store.settled();
  }
  console.log('commit latency around folds (s3rver, median ms over 3 rounds of 70 commits)');
  console.log(
    `  commit that triggers a fold   ${median(folding).toFixed(1)} ms   (${folding.length} commits)`,
  );
  console.log(`  the two commits after it      ${median(after).toFixed(1)} ms   (${after.length})`);
  console.log(
    `  every other commit            ${median(others).toFixed(1)} ms   (${others.length})`,
  );
  await store.close();
} finally {
  client.destroy();
  await server.stop();
}
