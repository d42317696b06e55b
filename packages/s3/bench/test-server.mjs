// The benches' own s3rver: a child process on a free loopback port serving a temporary
// directory (the tests' s3rver-child.cjs), and an S3 client for it. One place, so that
// every bench starts, addresses and removes it alike.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';

/** s3rver's fixed credentials. */
export const TEST_SERVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/**
 * Starts s3rver on a free port over a new temporary directory named from `prefix`.
 * Resolves with its `endpoint` and `stop()` (kills it, removes the directory); rejects
 * when it fails to start.
 */
export async function startTestServer(prefix) {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  const child = fork(
    fileURLToPath(new URL('../test/support/s3rver-child.cjs', import.meta.url)),
    [directory, '0'],
    {
      execArgv: ['--openssl-legacy-provider', '--no-warnings'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  );
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => (m.port ? resolve(m.port) : reject(new Error(m.error))));
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** An S3 client for the test server at `endpoint` (path style, no checksums s3rver lacks). */
export function testServerClient(endpoint) {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: TEST_SERVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
