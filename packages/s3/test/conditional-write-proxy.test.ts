// The test-support proxy against the conditional-write rules Amazon S3 documents
// ("How to prevent object overwrites with conditional writes", PutObject/DeleteObject):
// If-None-Match: * creates only if absent (412 otherwise), If-Match replaces or deletes
// only an object with that ETag (412 on another ETag, 404 when absent), and a conditional
// write racing another write on the same key gets 409 ConditionalRequestConflict.
import http from 'node:http';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConditionalWriteProxy,
  startConditionalWriteProxy,
} from './support/conditional-write-proxy.js';
import { type S3rverProcess, startS3rver, testClient } from './support/s3-server.js';

const BUCKET = 'proxy-test';
let s3rver: S3rverProcess;
let proxy: ConditionalWriteProxy;
let client: S3Client;

beforeAll(async () => {
  s3rver = await startS3rver();
  try {
    proxy = await startConditionalWriteProxy(s3rver.port);
    client = testClient(`http://127.0.0.1:${proxy.port}`);
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  } catch (e) {
    await s3rver.dispose();
    throw e;
  }
});

afterAll(async () => {
  client?.destroy();
  await proxy?.stop();
  await s3rver?.dispose();
});

let n = 0;
const key = () => `k${++n}`;

/** The status and S3 error code a request ends with. */
async function outcome(p: Promise<unknown>): Promise<{ status: number; code?: string }> {
  try {
    const out = (await p) as { $metadata: { httpStatusCode?: number } };
    return { status: out.$metadata.httpStatusCode ?? 0 };
  } catch (e) {
    const err = e as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
    return { status: err.$metadata?.httpStatusCode ?? -1, code: err.Code ?? err.name };
  }
}

const put = (k: string, body: string, extra: { IfNoneMatch?: string; IfMatch?: string } = {}) =>
  client.send(new PutObjectCommand({ Bucket: BUCKET, Key: k, Body: body, ...extra }));

async function text(k: string): Promise<string> {
  const out = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: k }));
  return (await out.Body?.transformToString()) ?? '';
}

describe('conditional-write proxy (S3 rules)', () => {
  it('If-None-Match: * creates an absent key and refuses an existing one with 412', async () => {
    const k = key();
    expect(await outcome(put(k, 'first', { IfNoneMatch: '*' }))).toEqual({ status: 200 });
    expect(await outcome(put(k, 'second', { IfNoneMatch: '*' }))).toEqual({
      status: 412,
      code: 'PreconditionFailed',
    });
    expect(await text(k)).toBe('first');
  });

  it('If-Match replaces only the ETag it names; 412 on another, 404 when absent', async () => {
    const k = key();
    const first = await put(k, 'v1');
    const second = await put(k, 'v2', { IfMatch: first.ETag as string });
    expect(second.$metadata.httpStatusCode).toBe(200);
    expect(await outcome(put(k, 'v3', { IfMatch: first.ETag as string }))).toEqual({
      status: 412,
      code: 'PreconditionFailed',
    });
    expect(await text(k)).toBe('v2');
    expect(await outcome(put(key(), 'x', { IfMatch: first.ETag as string }))).toEqual({
      status: 404,
      code: 'NoSuchKey',
    });
  });

  it('a conditional delete removes only the ETag it names', async () => {
    const k = key();
    const v1 = await put(k, 'v1');
    await put(k, 'v2');
    expect(
      await outcome(
        client.send(
          new DeleteObjectCommand({ Bucket: BUCKET, Key: k, IfMatch: v1.ETag as string }),
        ),
      ),
    ).toEqual({ status: 412, code: 'PreconditionFailed' });
    expect(await text(k)).toBe('v2');
  });

  it('If-None-Match with an ETag on a write is not implemented (501)', async () => {
    expect((await outcome(put(key(), 'x', { IfNoneMatch: '"abc"' }))).status).toBe(501);
  });

  it('of racing create-only writes exactly one succeeds; the others get 412 or 409', async () => {
    const k = key();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => outcome(put(k, `w${i}`, { IfNoneMatch: '*' }))),
    );
    const winners = results.filter((x) => x.status === 200);
    expect(winners).toHaveLength(1);
    for (const x of results.filter((y) => y.status !== 200)) {
      expect(['PreconditionFailed', 'ConditionalRequestConflict']).toContain(x.code);
    }
    const body = await text(k);
    expect(body).toMatch(/^w\d$/);
  });

  it('a conditional write while another write on the key is in flight gets 409', async () => {
    const k = key();
    // The first write's body is held open: it is in flight until we end it.
    const first = http.request({
      host: '127.0.0.1',
      port: proxy.port,
      method: 'PUT',
      path: `/${BUCKET}/${k}`,
      headers: { 'if-none-match': '*', 'content-length': '4' },
    });
    const firstDone = new Promise<number>((resolve) =>
      first.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }),
    );
    first.write('ab');
    // Until the proxy has taken the first write (a fixed wait is not enough on a loaded
    // machine), bounded by the test's timeout.
    while (proxy.writesInFlight(`/${BUCKET}/${k}`) === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const second = await outcome(put(k, 'other', { IfNoneMatch: '*' }));
    expect(second).toEqual({ status: 409, code: 'ConditionalRequestConflict' });
    first.end('cd');
    expect(await firstDone).toBe(200);
    expect(await text(k)).toBe('abcd');
    // Once the first write is done, the key is free again (and now exists: 412).
    expect((await outcome(put(k, 'late', { IfNoneMatch: '*' }))).status).toBe(412);
  });

  it('unconditional writes pass through and the last one wins', async () => {
    const k = key();
    await put(k, 'a');
    await put(k, 'b');
    expect(await text(k)).toBe('b');
  });
});

describe('the test s3rver', () => {
  it('acknowledges a PUT only once the object is stored: a GET right after reads it whole', async () => {
    // Straight to s3rver (the proxy's per-key lock would hide an early acknowledgement).
    const direct = testClient(`http://127.0.0.1:${s3rver.port}`);
    try {
      const body = (i: number) => `${i}:${'x'.repeat(256 * 1024)}`;
      const keys = Array.from({ length: 12 }, () => key());
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          keys.map(async (k, i) => {
            const want = body(round * 100 + i);
            await direct.send(new PutObjectCommand({ Bucket: BUCKET, Key: k, Body: want }));
            const got = await direct.send(new GetObjectCommand({ Bucket: BUCKET, Key: k }));
            expect(await got.Body?.transformToString('utf-8')).toBe(want);
          }),
        );
      }
    } finally {
      direct.destroy();
    }
  });
});
