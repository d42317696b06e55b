// A writer process for the kill test (test/kill.test.ts): commits turns to one session
// until it is killed, and reports each acknowledged one over IPC. It runs the built
// package (dist/), as an application would; `pnpm build` first (turbo's test task does).
// argv: endpoint bucket prefix sessionId round
import { S3Client } from '@aws-sdk/client-s3';
import { openS3Store } from '../../dist/index.js';

const [endpoint, bucket, prefix, id, round] = process.argv.slice(2);
const client = new S3Client({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
  maxAttempts: 2,
});
const store = await openS3Store({ client, bucket, prefix });
process.send?.({ ready: true });
for (let turn = 0; ; turn++) {
  const name = `r${round}t${turn}`;
  const append = [
    { role: 'user', content: `${name} question` },
    { role: 'assistant', content: `${name} answer` },
  ];
  try {
    const r = await store.commit(id, { append, operationId: name });
    process.send?.({ acked: name, revision: r.revision });
  } catch (e) {
    process.send?.({ failed: name, error: String(e) });
  }
}
