// Starts and stops the S3 servers the tests run against: s3rver 3.7.1 in a child process
// on a free loopback port (with --openssl-legacy-provider, which its paged listing needs
// on Node ≥ 17), optionally behind the conditional-write proxy. Or, when
// SESSIONKIT_TEST_S3_URL is set, a real endpoint (MinIO, AWS …), see DEVELOPERS.md.
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import {
  type ConditionalWriteProxy,
  startConditionalWriteProxy,
} from './conditional-write-proxy.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The bucket the tests use on s3rver. */
export const TEST_BUCKET = 'sessionkit-test';

/** A running s3rver child process. */
export interface S3rverProcess {
  readonly port: number;
  readonly directory: string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and keeps its data. */
  stop(): Promise<void>;
  /** Stops it and removes its data. */
  dispose(): Promise<void>;
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts s3rver on `port` (default: a free one) over `directory` (default: a fresh temp
 * folder). Rejects when it does not come up within 20 s.
 */
export async function startS3rver(
  options: { port?: number; directory?: string } = {},
): Promise<S3rverProcess> {
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'sk-s3rver-'));
  const child = fork(join(here, 's3rver-child.cjs'), [directory, String(options.port ?? 0)], {
    execArgv: ['--openssl-legacy-provider', '--no-warnings'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('s3rver did not start within 20 s')), 20_000);
    child.once('message', (m: { port?: number; error?: string }) => {
      clearTimeout(timer);
      if (m.port !== undefined) resolve(m.port);
      else reject(new Error(`s3rver failed to start: ${m.error}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited with ${code} before listening`));
    });
  }).catch(async (e: unknown) => {
    child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
    throw e;
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await waitForExit(child);
    clearTimeout(killer);
  };
  return {
    port,
    directory,
    stop,
    dispose: async () => {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Client settings for an endpoint: what s3rver (and MinIO) need. */
export function clientConfigFor(endpoint: string): S3ClientConfig {
  return {
    endpoint,
    region: process.env.SESSIONKIT_TEST_S3_REGION ?? 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: process.env.SESSIONKIT_TEST_S3_ACCESS_KEY_ID ?? 'S3RVER',
      secretAccessKey: process.env.SESSIONKIT_TEST_S3_SECRET_ACCESS_KEY ?? 'S3RVER',
    },
    // Without these the SDK sends streaming checksums s3rver stores as part of the body.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
  };
}

/** Where a test suite's stores live: an endpoint, a bucket, and a way to stop it all. */
export interface S3Target {
  /** The endpoint stores talk to (the proxy, or the real endpoint). */
  endpoint: string;
  bucket: string;
  /** A key prefix for this run (empty on s3rver, unique on a real endpoint). */
  runPrefix: string;
  /** Present when the target is s3rver behind the proxy. */
  s3rver?: S3rverProcess | undefined;
  proxy?: ConditionalWriteProxy | undefined;
  /** Whether the target is a real endpoint from SESSIONKIT_TEST_S3_URL. */
  real: boolean;
  stop(): Promise<void>;
}

/** A client on `endpoint` (tests' raw access and borrowed clients). */
export function testClient(endpoint: string): S3Client {
  return new S3Client(clientConfigFor(endpoint));
}

/**
 * The target of a test run: SESSIONKIT_TEST_S3_URL (`http(s)://host:port/bucket`) when
 * set, else s3rver behind the conditional-write proxy, with the bucket created. Always
 * `stop()` it (in afterAll) — the s3rver child is killed even when tests failed.
 */
export async function startTarget(): Promise<S3Target> {
  const real = process.env.SESSIONKIT_TEST_S3_URL;
  if (real !== undefined && real !== '') {
    const url = new URL(real);
    const bucket = url.pathname.replace(/^\/+|\/+$/g, '');
    if (bucket === '')
      throw new Error('SESSIONKIT_TEST_S3_URL must name a bucket: http://host:port/bucket');
    return {
      endpoint: url.origin,
      bucket,
      runPrefix: `sk-test-${process.pid}-${Date.now().toString(36)}/`,
      real: true,
      stop: async () => {},
    };
  }
  const s3rver = await startS3rver();
  let proxy: ConditionalWriteProxy | undefined;
  try {
    proxy = await startConditionalWriteProxy(s3rver.port);
    const client = testClient(`http://127.0.0.1:${s3rver.port}`);
    await client.send(new CreateBucketCommand({ Bucket: TEST_BUCKET }));
    client.destroy();
  } catch (e) {
    await proxy?.stop();
    await s3rver.dispose();
    throw e;
  }
  const started = proxy;
  return {
    endpoint: `http://127.0.0.1:${started.port}`,
    bucket: TEST_BUCKET,
    runPrefix: '',
    s3rver,
    proxy: started,
    real: false,
    stop: async () => {
      await started.stop();
      await s3rver.dispose();
    },
  };
}
