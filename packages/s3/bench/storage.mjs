// Bytes stored per message after a 200-turn conversation (the repository bench's ~1 KB
// messages, docs/benchmarks.md), by kind of object. Not a test: prints figures. Needs a
// build (`pnpm --filter @sessionkit/s3 build`). Starts its own s3rver (one writer, opened
// with acceptLostUpdates: the objects are the same ones).
// Usage: node bench/storage.mjs   [BENCH_GRACE_MS=1000] [BENCH_TURNS=200] [BENCH_SETTLE=1]
// BENCH_SETTLE=1 shows the steady state of a session in use longer than the grace: after
// the turns it waits past the grace (plus S3's whole-second slack), then commits more
// turns until one of them has removed versions (the removal runs on the 1st, 2nd and 17th
// commit after a fold, so at most 32 more turns), and counts what is left.
import { CreateBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { openS3Store } from '../dist/index.js';
import { startTestServer, testServerClient } from './test-server.mjs';

const TURNS = Number(process.env.BENCH_TURNS ?? 200);
const GRACE = Number(process.env.BENCH_GRACE_MS ?? 1000);
const SETTLE = process.env.BENCH_SETTLE === '1';
const FILLER = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(20);
const message = (n, role) => ({ role, content: `message ${n}: ${FILLER.slice(0, 1000)}` });

const server = await startTestServer('sk-s3-bytes-');
const client = testServerClient(server.endpoint);
const bucket = 'sessionkit-bench';

/** Every object under `prefix` (all pages). */
async function listAll(prefix) {
  const out = [];
  let token;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    out.push(...(page.Contents ?? []));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}
try {
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const prefix = 'bytes/';
  const store = await openS3Store({
    client,
    bucket,
    prefix,
    acceptLostUpdates: true,
    pruneGraceMs: GRACE,
  });
  const s = await store.create({ id: 'bytes', folder: '/bench-bytes', title: 'bytes' });
  let revision = s.revision;
  let json = 0;
  let turns = 0;
  const turn = async () => {
    const t = turns++;
    const append = [message(2 * t, 'user'), message(2 * t + 1, 'assistant')];
    json += append.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
    ({ revision } = await store.commit(s.id, { expectedRevision: revision, append }));
  };
  for (let t = 0; t < TURNS; t++) await turn();
  if (SETTLE) {
    await new Promise((resolve) => setTimeout(resolve, GRACE + 2500));
    const versions = async () =>
      (await listAll(`${prefix}s/`)).filter((k) => /\/v\//.test(k.Key)).length;
    for (let before = await versions(), extra = 0; extra < 32; extra++) {
      await turn();
      if ((await versions()) < before) break;
    }
  }
  await store.close();
  const kinds = new Map();
  let total = 0;
  for (const o of await listAll(prefix)) {
    const key = (o.Key ?? '').slice(prefix.length);
    const kind =
      key.match(/\/g\/[^/]+\/(v|t|f|ft|w)\//)?.[1] ??
      key.replace(/^s\/[^/]+\//, 's/<id>/').replace(/\d+/g, 'N');
    const k = kinds.get(kind) ?? { count: 0, bytes: 0 };
    k.count++;
    k.bytes += o.Size ?? 0;
    kinds.set(kind, k);
    total += o.Size ?? 0;
  }
  const messages = 2 * turns;
  console.log(
    `${turns} turns, ${messages} messages of ${(json / messages).toFixed(0)} B JSON each, grace ${GRACE} ms${SETTLE ? ', settled past the grace' : ''}`,
  );
  for (const [kind, k] of [...kinds].sort()) {
    console.log(
      `  ${kind.padEnd(22)} ${String(k.count).padStart(4)} objects ${String(k.bytes).padStart(9)} B  ${(k.bytes / json).toFixed(3)}x`,
    );
  }
  console.log(
    `  total ${total} B = ${(total / messages).toFixed(0)} B per message = ${(total / json).toFixed(2)}x the messages' JSON`,
  );
} finally {
  client.destroy();
  await server.stop();
}
