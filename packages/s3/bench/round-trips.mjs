#!/usr/bin/env node
// Sequential round trips and requests per commit (append; append with an operationId; a
// pop by truncate), counted at the S3 client: a round trip is a stretch of time with at
// least one request in flight. A request still in flight when the commit resolves (the
// write marker's removal, which is not waited for) is not on its path and is not counted
// as a round trip. Run: `pnpm --filter @sessionkit/s3 build && node bench/round-trips.mjs`.
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { openS3Store } from '../dist/index.js';
import { startTestServer, testServerClient } from './test-server.mjs';

const server = await startTestServer('sessionkit-rt-');
const client = testServerClient(server.endpoint);
let inFlight = 0;
let waves = 0;
client.middlewareStack.add(
  (next) => async (args) => {
    if (inFlight++ === 0) waves++;
    try {
      return await next(args);
    } finally {
      inFlight--;
    }
  },
  { step: 'initialize' },
);
await client.send(new CreateBucketCommand({ Bucket: 'round-trips' }));
// s3rver ignores conditional headers: one writer here, so nothing is lost.
const store = await openS3Store({ client, bucket: 'round-trips', acceptLostUpdates: true });
const total = (s) => s.get + s.put + s.list + s.delete;
const msg = (n) => ({ role: 'user', content: `message ${n}` });
const kinds = [
  ['append', (n) => ({ append: [msg(n)] })],
  ['append with operationId', (n) => ({ append: [msg(n)], operationId: `op-${n}` })],
  ['pop by truncate', () => ({ truncate: 0 })],
];
const COMMITS = 31; // under the fold period (32): a fold adds its own requests
for (const [k, [what, input]] of kinds.entries()) {
  // A session per kind, holding one message so that a pop has one to drop.
  const s = await store.create({ id: `round-trips-${k}`, folder: '/bench', messages: [msg(0)] });
  let trips = 0;
  let requests = 0;
  for (let n = 0; n < COMMITS; n++) {
    const before = total(store.stats);
    waves = 0;
    await store.commit(s.id, input(n));
    trips += waves - (inFlight > 0 ? 1 : 0);
    await new Promise((resolve) => setTimeout(resolve, 30)); // the marker removal ends
    requests += total(store.stats) - before;
  }
  const per = (x) => (x / COMMITS).toFixed(2);
  console.log(`${what}: ${per(trips)} round trips, ${per(requests)} requests per commit`);
}
await store.close();
client.destroy();
await server.stop();
