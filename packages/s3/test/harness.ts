// Test stores: each on a fresh key prefix of the run's target, with a client of its own.
import { randomBytes } from 'node:crypto';
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { openS3Store, type S3Store } from '../src/index.js';
import { type S3Target, startTarget, testClient } from './support/s3-server.js';

let counter = 0;

/** A key prefix no other store of this run uses. */
export function freshPrefix(target: S3Target): string {
  counter++;
  return `${target.runPrefix}t${counter}-${randomBytes(3).toString('hex')}/`;
}

/** One client per target, shared by its test stores (each store borrows it). */
const clients = new WeakMap<S3Target, S3Client>();

/** The target's shared client (destroyed by `releaseClient`). */
export function sharedClient(target: S3Target): S3Client {
  let client = clients.get(target);
  if (client === undefined) {
    client = testClient(target.endpoint);
    clients.set(target, client);
  }
  return client;
}

/** Destroys the target's shared client. */
export function releaseClient(target: S3Target): void {
  clients.get(target)?.destroy();
  clients.delete(target);
}

/** A store on `prefix` (fresh by default) borrowing the target's shared client. */
export async function storeOn(target: S3Target, prefix = freshPrefix(target)): Promise<S3Store> {
  return openS3Store({ client: sharedClient(target), bucket: target.bucket, prefix });
}

/** Closes the store; on a real endpoint also removes its objects. */
export async function destroyStore(target: S3Target, store: S3Store): Promise<void> {
  await store.close();
  if (target.real) await removePrefix(target, store.prefix);
}

/** Deletes every object under `prefix`. */
export async function removePrefix(target: S3Target, prefix: string): Promise<void> {
  const client = testClient(target.endpoint);
  try {
    for (;;) {
      const out = await client.send(
        new ListObjectsV2Command({ Bucket: target.bucket, Prefix: prefix }),
      );
      const keys = (out.Contents ?? []).map((c) => ({ Key: c.Key }));
      if (keys.length === 0) return;
      await client.send(
        new DeleteObjectsCommand({ Bucket: target.bucket, Delete: { Objects: keys } }),
      );
    }
  } finally {
    client.destroy();
  }
}

/** The test server of a test file and a raw client of it (see `useTarget`). */
export interface FileTarget {
  readonly target: S3Target;
  readonly raw: S3Client;
}

/**
 * Starts the test server (s3rver behind the conditional-write proxy, or the real S3 of
 * SESSIONKIT_TEST_S3_URL) before the file's tests and stops it after them, with a raw
 * client for reading objects as stored. Call at a test file's top level.
 */
export function useTarget(): FileTarget {
  let target: S3Target | undefined;
  let raw: S3Client | undefined;
  beforeAll(async () => {
    target = await startTarget();
    raw = testClient(target.endpoint);
  });
  afterAll(async () => {
    if (target) releaseClient(target);
    raw?.destroy();
    await target?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error('the test server is not started (useTarget runs in beforeAll)');
    return value;
  };
  return {
    get target() {
      return started(target);
    },
    get raw() {
      return started(raw);
    },
  };
}
