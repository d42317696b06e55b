// Opening: the conditional-write check (refusal on plain s3rver, which ignores
// If-None-Match/If-Match), the opt-out, borrowed and owned clients, s3: URLs.
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { isSessionKitError, newSessionId, openStore } from '@sessionkit/core';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openS3Store, storeAdapter } from '../src/index.js';
import { parseS3Url } from '../src/url-options.js';
import {
  type S3rverProcess,
  type S3Target,
  startS3rver,
  startTarget,
  testClient,
} from './support/s3-server.js';

registerStoreAdapter(storeAdapter);

let plain: S3rverProcess;
let plainClient: S3Client;
let target: S3Target;

beforeAll(async () => {
  plain = await startS3rver();
  plainClient = testClient(`http://127.0.0.1:${plain.port}`);
  await plainClient.send(new CreateBucketCommand({ Bucket: 'plain-bucket' }));
  target = await startTarget();
});

afterAll(async () => {
  plainClient?.destroy();
  await plain?.dispose();
  await target?.stop();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: unknown) => (isSessionKitError(e) ? e.code : `foreign: ${String(e)}`),
  );
}

describe('the conditional-write check at open', () => {
  it('refuses a server that ignores conditional writes, saying why', async () => {
    const error = await openS3Store({
      client: plainClient,
      bucket: 'plain-bucket',
      prefix: 'a',
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isSessionKitError(error, 'invalid_argument')).toBe(true);
    expect((error as Error).message).toMatch(/does not honour conditional writes/);
    expect((error as Error).message).toMatch(/If-None-Match/);
    expect((error as Error).message).toMatch(/acceptLostUpdates/);
  });

  it('refuses it through openStore too, and opens with acceptLostUpdates=true', async () => {
    const url = `s3://plain-bucket/b?endpoint=${encodeURIComponent(`http://127.0.0.1:${plain.port}`)}&forcePathStyle=true`;
    const options = {
      clientConfig: { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } },
    };
    expect(await codeOf(openStore(url, options))).toBe('invalid_argument');
    const store = await openStore(`${url}&acceptLostUpdates=true`, options);
    const s = await store.create({ id: newSessionId(), title: 'single writer' });
    expect((await store.load(s.id)).title).toBe('single writer');
    await store.close();
  });

  it('opens on a server that honours them (the proxy) and leaves a borrowed client open', async () => {
    const client = testClient(target.endpoint);
    const store = await openS3Store({
      client,
      bucket: target.bucket,
      prefix: `${target.runPrefix}open-borrowed`,
    });
    expect(store.prefix).toBe(`${target.runPrefix}open-borrowed/`);
    await store.create({ id: 'kept' });
    await store.close();
    expect(await codeOf(store.load('kept'))).toBe('closed');
    const again = await openS3Store({
      client,
      bucket: target.bucket,
      prefix: `${target.runPrefix}open-borrowed/`,
    });
    expect((await again.load('kept')).id).toBe('kept');
    await again.close();
    client.destroy();
  });
});

describe('options and URLs', () => {
  it('rejects bad options before any request', async () => {
    const client = testClient(target.endpoint);
    expect(await codeOf(openS3Store({ client, bucket: '' }))).toBe('invalid_argument');
    expect(await codeOf(openS3Store({ bucket: 'x' }))).toBe('invalid_argument');
    expect(await codeOf(openS3Store({ client, clientConfig: {}, bucket: 'x' }))).toBe(
      'invalid_argument',
    );
    expect(await codeOf(openS3Store({ client, bucket: 'x', indexShards: 0 }))).toBe(
      'invalid_argument',
    );
    expect(await codeOf(openS3Store({ client, bucket: 'x', typo: 1 } as never))).toBe(
      'invalid_argument',
    );
    client.destroy();
  });

  it('reads the documented URL options and rejects any other', () => {
    const parsed = parseS3Url(
      new URL(
        's3://my-bucket/some/prefix?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&forcePathStyle=true&indexShards=16',
      ),
    );
    expect(parsed).toEqual({
      bucket: 'my-bucket',
      prefix: 'some/prefix',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      indexShards: 16,
      acceptLostUpdates: false,
    });
    for (const bad of [
      's3://b/p?pathStyle=true',
      's3://b/p?region=a&region=b',
      's3://b/p?forcePathStyle=yes',
      's3://user:secret@b/p',
      's3:///p',
    ]) {
      expect(() => parseS3Url(new URL(bad)), bad).toThrow(/openStore\(s3:\)/);
    }
  });

  it('openStore rejects an unknown URL option without naming credentials', async () => {
    expect(await codeOf(openStore('s3://b/p?secretKey=abc'))).toBe('invalid_argument');
    expect(await codeOf(openStore('s3://b/p', { nope: true }))).toBe('invalid_argument');
  });
});
