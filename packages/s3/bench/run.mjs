// Benchmark of @sessionkit/s3 beside a raw PutObject of the same bytes, in one run.
// Not a test: prints figures. Needs a build (`pnpm --filter @sessionkit/s3 build`).
// Runs against SESSIONKIT_TEST_S3_URL (http://host:port/bucket, credentials from
// SESSIONKIT_TEST_S3_ACCESS_KEY_ID / _SECRET_ACCESS_KEY) when set, else against an
// s3rver 3.7.1 it starts itself. s3rver ignores conditional headers, so the store opens
// it with acceptLostUpdates (one writer here): the requests are the same ones.
// Usage: pnpm --filter @sessionkit/s3 bench   [BENCH_TURNS=150]
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { openS3Store } from '../dist/index.js';
import { startTestServer, TEST_SERVER_CREDENTIALS } from './test-server.mjs';

const TURNS = Number(process.env.BENCH_TURNS ?? 150);
const LONG = 10_000;

/** A turn: a user message and an answer of ordinary length. */
const turn = (i) => [
  {
    role: 'user',
    content: `question ${i}: how does the retry budget interact with the queue depth?`,
  },
  {
    role: 'assistant',
    content: `answer ${i}: ${'the queue drains in order and each retry waits its turn; '.repeat(6)}`,
  },
];
const history = (n) => Array.from({ length: n / 2 }, (_, i) => turn(i)).flat();

async function startServer() {
  const real = process.env.SESSIONKIT_TEST_S3_URL;
  if (real) {
    const url = new URL(real);
    return {
      endpoint: url.origin,
      bucket: url.pathname.replace(/^\/+|\/+$/g, ''),
      acceptLostUpdates: false,
      credentials: {
        accessKeyId: process.env.SESSIONKIT_TEST_S3_ACCESS_KEY_ID,
        secretAccessKey: process.env.SESSIONKIT_TEST_S3_SECRET_ACCESS_KEY,
      },
      stop: async () => {},
    };
  }
  const server = await startTestServer('sk-s3-bench-');
  return {
    endpoint: server.endpoint,
    bucket: 'sessionkit-bench',
    acceptLostUpdates: true,
    credentials: TEST_SERVER_CREDENTIALS,
    create: true,
    stop: server.stop,
  };
}

const server = await startServer();
const newClient = () =>
  new S3Client({
    endpoint: server.endpoint,
    region: process.env.SESSIONKIT_TEST_S3_REGION ?? 'us-east-1',
    forcePathStyle: true,
    credentials: server.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
const client = newClient();
const prefix = `sk-bench-${process.pid}-${Date.now().toString(36)}/`;
const requests = (stats) => stats.get + stats.put + stats.list + stats.delete;

try {
  if (server.create) await client.send(new CreateBucketCommand({ Bucket: server.bucket }));
  const store = await openS3Store({
    client,
    bucket: server.bucket,
    prefix,
    acceptLostUpdates: server.acceptLostUpdates,
  });

  /** Commits `TURNS` turns onto a session holding `n` messages: ops/s and requests per turn. */
  async function commitBench(n) {
    const id = `bench-${n}`;
    await store.create({ id, messages: history(n) });
    const before = requests(store.stats);
    const start = performance.now();
    for (let i = 0; i < TURNS; i++) await store.commit(id, { append: turn(n + i) });
    const ms = performance.now() - start;
    // The folds and removals the turns started, counted with them (not timed).
    await store.settled();
    return {
      opsPerSec: (TURNS * 1000) / ms,
      requestsPerTurn: (requests(store.stats) - before) / TURNS,
    };
  }

  /** The bytes of the newest version object of `id` (what one commit wrote). */
  async function versionBytes(id) {
    const get = async (key) => {
      const out = await client.send(
        new GetObjectCommand({ Bucket: server.bucket, Key: prefix + key }),
      );
      return out.Body.transformToString();
    };
    const head = JSON.parse(await get(`s/${id}/head`));
    return get(`s/${id}/g/${head.gen}/v/${String(head.n).padStart(12, '0')}`);
  }

  /** The same bytes as a turn's version object, as one raw PutObject each. */
  async function rawPutBench(body) {
    const start = performance.now();
    for (let i = 0; i < TURNS; i++) {
      await client.send(
        new PutObjectCommand({
          Bucket: server.bucket,
          Key: `${prefix}raw/${i}`,
          Body: Buffer.from(body),
        }),
      );
    }
    return (TURNS * 1000) / (performance.now() - start);
  }

  /**
   * Turns per second of one writer, and of eight writers (each a store of its own, as
   * eight processes would be, on a session of its own) together: rounds alternate, so
   * that drift of a shared machine hits both alike.
   */
  async function writerScaling() {
    const clients = Array.from({ length: 8 }, newClient);
    const writers = await Promise.all(
      clients.map((own) =>
        openS3Store({
          client: own,
          bucket: server.bucket,
          prefix,
          acceptLostUpdates: server.acceptLostUpdates,
        }),
      ),
    );
    const ids = await Promise.all(
      writers.map(async (w, k) => (await w.create({ id: `writer-${k}` })).id),
    );
    const run = async (count) => {
      const start = performance.now();
      await Promise.all(
        writers.slice(0, count).map(async (w, k) => {
          for (let i = 0; i < TURNS / 3; i++) await w.commit(ids[k], { append: turn(i) });
        }),
      );
      return (count * (TURNS / 3) * 1000) / (performance.now() - start);
    };
    // The server's own bound: raw PUTs of a turn's bytes, one loop against eight.
    const body = await versionBytes(ids[0]);
    const raw = async (count) => {
      const start = performance.now();
      await Promise.all(
        clients.slice(0, count).map(async (own, k) => {
          for (let i = 0; i < TURNS / 3; i++) {
            const Key = `${prefix}raw-scaling/${k}/${i}`;
            await own.send(new PutObjectCommand({ Bucket: server.bucket, Key, Body: body }));
          }
        }),
      );
      return (count * (TURNS / 3) * 1000) / (performance.now() - start);
    };
    let one = 0;
    let eight = 0;
    let rawOne = 0;
    let rawEight = 0;
    for (let round = 0; round < 3; round++) {
      one += (await run(1)) / 3;
      eight += (await run(8)) / 3;
      rawOne += (await raw(1)) / 3;
      rawEight += (await raw(8)) / 3;
    }
    await Promise.all(writers.map((w) => w.close()));
    for (const own of clients) own.destroy();
    return { one, eight, rawOne, rawEight };
  }

  // Interleaved, so that drift of a shared machine hits both alike.
  const small = await commitBench(10);
  const body = await versionBytes('bench-10');
  const raw = await rawPutBench(body);
  const large = await commitBench(LONG);
  const raw2 = await rawPutBench(body);
  const rawPut = (raw + raw2) / 2;

  const loadBefore = requests(store.stats);
  const loadStart = performance.now();
  const loads = 5;
  for (let i = 0; i < loads; i++) await store.load(`bench-${LONG}`);
  const loadMs = (performance.now() - loadStart) / loads;
  const loadRequests = (requests(store.stats) - loadBefore) / loads;
  const windowStart = performance.now();
  for (let i = 0; i < 20; i++) await store.loadMessages(`bench-${LONG}`, { last: 20 });
  const windowMs = (performance.now() - windowStart) / 20;
  const listStart = performance.now();
  for (let i = 0; i < 20; i++) await store.list();
  const listMs = (performance.now() - listStart) / 20;

  const scaling = await writerScaling();

  const f = (x) => x.toFixed(1).padStart(8);
  console.log(
    `@sessionkit/s3 bench against ${process.env.SESSIONKIT_TEST_S3_URL ? 'SESSIONKIT_TEST_S3_URL' : 's3rver 3.7.1'} (${TURNS} turns each)`,
  );
  console.log(
    `  commit, history 10       ${f(small.opsPerSec)} turns/s   ${small.requestsPerTurn.toFixed(2)} requests/turn`,
  );
  console.log(
    `  commit, history ${LONG}   ${f(large.opsPerSec)} turns/s   ${large.requestsPerTurn.toFixed(2)} requests/turn`,
  );
  console.log(
    `  raw PutObject, same bytes${f(rawPut)} puts/s   (${Buffer.byteLength(body)} bytes)`,
  );
  console.log(
    `  commit(${LONG}) / commit(10)  ${(large.opsPerSec / small.opsPerSec).toFixed(2)}   (target ≥ 0.8)`,
  );
  console.log(
    `  commit(10) / raw PUT          ${(small.opsPerSec / rawPut).toFixed(2)}   (target ≥ 0.5)`,
  );
  console.log(`  commit(${LONG}) / raw PUT      ${(large.opsPerSec / rawPut).toFixed(2)}`);
  console.log(
    `  load of ${LONG + 2 * TURNS} messages    ${f(loadMs)} ms   ${loadRequests.toFixed(1)} requests`,
  );
  console.log(`  last 20 of them          ${f(windowMs)} ms`);
  console.log(`  list (2 sessions)        ${f(listMs)} ms`);
  console.log(
    `  1 writer                 ${f(scaling.one)} turns/s   8 writers on 8 sessions ${f(scaling.eight)} turns/s   = ${(scaling.eight / scaling.one).toFixed(2)}× (target ≥ 6)`,
  );
  console.log(
    `  raw PUT, 1 loop          ${f(scaling.rawOne)} puts/s    8 loops                 ${f(scaling.rawEight)} puts/s    = ${(scaling.rawEight / scaling.rawOne).toFixed(2)}× (the server's bound)`,
  );
  await store.close();
} finally {
  client.destroy();
  await server.stop();
}

// Round trips and requests per commit, counted at the client on a server of its own.
execFileSync(process.execPath, [fileURLToPath(new URL('./round-trips.mjs', import.meta.url))], {
  stdio: ['ignore', 'inherit', 'ignore'],
});
