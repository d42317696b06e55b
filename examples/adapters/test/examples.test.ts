// Each example runs as a user runs it (`node src/<adapter>.js`, its own process) and must
// print what its comments promise.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startConditionalWriteProxy } from '../../../packages/s3/test/support/conditional-write-proxy.js';
import { startS3rver } from '../../../packages/s3/test/support/s3-server.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sessionkit-examples-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `$name`, else its line in the repository's .env.example (where the tests' services are). */
function testSetting(name: string): string {
  if (process.env[name]) return process.env[name];
  const text = readFileSync(join(here, '..', '..', '.env.example'), 'utf8');
  return new RegExp(`^${name}=(.*)$`, 'm').exec(text)?.[1] ?? '';
}

/**
 * Runs `src/<name>.js` in its own process. Asynchronous: the S3 test's proxy runs in this
 * process and must keep answering while the example runs.
 */
function runExample(name: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    execFile(
      process.execPath,
      [join('src', `${name}.js`)],
      { cwd: here, env: { ...process.env, ...env }, timeout: 60_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: stdout, err: stderr });
      },
    );
  });
}

describe('examples', () => {
  it('memory: the second tab is refused with conflict and nothing is lost', async () => {
    const { code, out, err } = await runExample('memory');
    expect(code, err).toBe(0);
    expect(out).toContain('tab A committed: revision 2');
    expect(out).toContain('tab B refused: conflict');
    expect(out).toContain('messages: Sent from tab A\n');
  });

  it('file: a reopened store sees the committed turn, reads a window and searches', async () => {
    const dir = join(work, 'file-store');
    const { code, out, err } = await runExample('file', { SESSIONKIT_EXAMPLE_DIR: dir });
    expect(code, err).toBe(0);
    expect(out).toMatch(/reopened \S+: 2 messages, 1 turn/);
    expect(out).toContain('last message: Saved: --release --locked.');
    expect(out).toContain('search found: true');
  });

  it('redis: two stores share one server, search finds the turn, TTL is set, delete is seen', async () => {
    const prefix = `sk-example-${process.pid}-${Date.now()}:`;
    const client = new Redis(testSetting('SESSIONKIT_TEST_REDIS_URL'));
    try {
      const { code, out, err } = await runExample('redis', {
        REDIS_URL: testSetting('SESSIONKIT_TEST_REDIS_URL'),
        SESSIONKIT_EXAMPLE_PREFIX: prefix,
      });
      expect(code, err).toBe(0);
      expect(out).toMatch(/gateway B found \S+: true/);
      expect(out).toContain('expires in about a day: true');
      expect(out).toContain('deleted, gateway A sees it: false');
    } finally {
      // The store's own index keys stay after the session is deleted: drop the prefix.
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      await client.quit();
    }
  });

  it('s3: of two writers on one revision exactly one wins, through a server that enforces conditional writes', async () => {
    // s3rver is a real S3 server that ignores conditional headers; the test proxy in
    // front of it enforces them as S3 does (packages/s3/test/support).
    const s3rver = await startS3rver();
    const proxy = await startConditionalWriteProxy(s3rver.port);
    const client = new S3Client({
      endpoint: `http://127.0.0.1:${proxy.port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    try {
      await client.send(new CreateBucketCommand({ Bucket: 'examples' }));
      const endpoint = encodeURIComponent(`http://127.0.0.1:${proxy.port}`);
      const { code, out, err } = await runExample('s3', {
        SESSIONKIT_EXAMPLE_S3_URL: `s3://examples/run?endpoint=${endpoint}&region=us-east-1&forcePathStyle=true`,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
      });
      expect(code, err).toBe(0);
      expect(out).toContain('one winner: true');
      expect(out).toContain('stored messages: 1');
      expect(out).toContain('listed: true');
    } finally {
      client.destroy();
      await proxy.stop();
      await s3rver.dispose();
    }
  });

  it('postgres: a borrowed pool, search and a branch, on a schema of its own', async () => {
    const url = testSetting('SESSIONKIT_TEST_POSTGRES_URL');
    const schema = `sk_example_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: url });
    try {
      const { code, out, err } = await runExample('postgres', {
        DATABASE_URL: url,
        SESSIONKIT_EXAMPLE_SCHEMA: schema,
      });
      expect(code, err).toBe(0);
      expect(out).toContain(`schema ${schema}: search found true`);
      expect(out).toMatch(/branch \S+ of \S+: children 1/);
    } finally {
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
