#!/usr/bin/env node
// Sequential round trips and requests per commit (append; append with an operationId; a
// pop by truncate), counted at the S3 client. A request's depth is one more than the
// deepest request of the commit that had ended when it was sent; the commit's round trips
// are the greatest depth among the requests that ended before it resolved (its critical
// path). Requests still in flight when it resolves (search text, index entry, marker
// removal: off its path) count as requests per turn, not as round trips. Run:
// `pnpm --filter @sessionkit/s3 build && node bench/round-trips.mjs`.
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { openS3Store } from '../dist/index.js';
import { startTestServer, testServerClient } from './test-server.mjs';

const server = await startTestServer('sessionkit-rt-');
const client = testServerClient(server.endpoint);
/** The requests of the commit being measured: depth, and whether it has ended. */
let requests = [];
client.middlewareStack.add(
  (next) => async (args) => {
    const depth = 1 + Math.max(0, ...requests.filter((r) => r.ended).map((r) => r.depth));
    const request = { depth, ended: false };
    requests.push(request);
    try {
      return await next(args);
    } finally {
      request.ended = true;
    }
  },
  { step: 'initialize' },
);
await client.send(new CreateBucketCommand({ Bucket: 'round-trips' }));
// s3rver ignores conditional headers: one writer here, so nothing is lost.
const store = await openS3Store({ client, bucket: 'round-trips', acceptLostUpdates: true });
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
  let onPath = 0;
  let all = 0;
  for (let n = 0; n < COMMITS; n++) {
    requests = [];
    await store.commit(s.id, input(n));
    const ended = requests.filter((r) => r.ended);
    trips += Math.max(0, ...ended.map((r) => r.depth));
    onPath += ended.length;
    await new Promise((resolve) => setTimeout(resolve, 30)); // the off-path writes end
    all += requests.length;
  }
  const per = (x) => (x / COMMITS).toFixed(2);
  console.log(
    `${what}: ${per(trips)} round trips, ${per(onPath)} requests on the path, ${per(all)} requests per commit`,
  );
}
await store.close();
client.destroy();
await server.stop();
