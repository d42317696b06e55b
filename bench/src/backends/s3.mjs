// The S3 store on s3rver (a real S3 HTTP server in Node, started here on a free loopback
// port, one writer: s3rver ignores conditional headers, so the store opens it with
// `acceptLostUpdates`; the requests are the ones a conditional-write server gets) beside
// a raw PutObject of the same bytes.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { openS3Store } from '@sessionkit/s3';

const BUCKET = 'sessionkit-bench';
let server;

async function startServer() {
  const directory = mkdtempSync(join(tmpdir(), 'sessionkit-bench-s3-'));
  const script = fileURLToPath(
    new URL('../../../packages/s3/test/support/s3rver-child.cjs', import.meta.url),
  );
  const child = fork(script, [directory, '0'], {
    execArgv: ['--openssl-legacy-provider', '--no-warnings'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => (m.port ? resolve(m.port) : reject(new Error(m.error))));
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
  });
  const client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // s3rver closes idle keep-alive sockets without notice; a reused one fails with
    // ECONNRESET. A fresh connection per request is what the figures then include.
    requestHandler: { httpAgent: new Agent({ keepAlive: false }) },
  });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  return {
    client,
    async stop() {
      client.destroy();
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

let prefixes = 0;
const freshPrefix = (what) => `${what}-${process.pid}-${++prefixes}/`;

/** Bytes of every object under `prefix`. */
async function bytesUnder(client, prefix) {
  let total = 0;
  let token;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) total += o.Size ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return total;
}

export default {
  name: 's3',
  ceiling: 'one PutObject of the same bytes (s3rver)',
  // s3rver writes objects in place and resets connections when writes to one key overlap
  // (the index shards every create updates): creates go one at a time, so fewer of them.
  listSessions: 500,
  createConcurrency: 1,
  async available() {
    try {
      server ??= await startServer();
      return true;
    } catch (e) {
      return `s3rver did not start (${e.message})`;
    }
  },
  async open() {
    const prefix = freshPrefix('store');
    const store = await openS3Store({
      client: server.client,
      bucket: BUCKET,
      prefix,
      acceptLostUpdates: true,
    });
    return {
      store,
      storedBytes: () => bytesUnder(server.client, prefix),
      // The bytes of every object the store has PUT (its own counter).
      writtenBytes: () => store.stats.putBytes,
      close: () => store.close(),
    };
  },
  async raw() {
    const prefix = freshPrefix('raw');
    let n = 0;
    return {
      async turn(messages) {
        await server.client.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `${prefix}${n++}`,
            Body: JSON.stringify(messages),
            IfNoneMatch: '*',
          }),
        );
      },
    };
  },
  async end() {
    await server?.stop();
    server = undefined;
  },
};
