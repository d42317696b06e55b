// Direct access to a store's objects, for fault injection and checks that read the
// bucket itself.
import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { S3Store } from '../src/index.js';

/** The text of a store object (key relative to the store prefix), or undefined. */
export async function readRaw(
  client: S3Client,
  store: S3Store,
  key: string,
): Promise<string | undefined> {
  try {
    const out = await client.send(
      new GetObjectCommand({ Bucket: store.bucket, Key: store.prefix + key }),
    );
    return await out.Body?.transformToString('utf-8');
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
      return undefined;
    throw e;
  }
}

/** The bytes of a store object, or undefined (search-text objects are compressed). */
export async function readRawBytes(
  client: S3Client,
  store: S3Store,
  key: string,
): Promise<Uint8Array | undefined> {
  try {
    const out = await client.send(
      new GetObjectCommand({ Bucket: store.bucket, Key: store.prefix + key }),
    );
    return await out.Body?.transformToByteArray();
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
      return undefined;
    throw e;
  }
}

/** Overwrites a store object unconditionally. */
export async function writeRaw(
  client: S3Client,
  store: S3Store,
  key: string,
  text: string,
): Promise<void> {
  await client.send(
    new PutObjectCommand({ Bucket: store.bucket, Key: store.prefix + key, Body: text }),
  );
}

/** Deletes a store object. */
export async function deleteRaw(client: S3Client, store: S3Store, key: string): Promise<void> {
  await client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: store.prefix + key }));
}

/** A session's head as stored. */
export interface RawHead {
  gen: string;
  n: number;
  state: {
    header: Record<string, unknown>;
    messageCount: number;
    chain: {
      base: { n: number; folded: boolean; count: number };
      parts: Array<{ n: number; end: number }>;
    };
  };
}

export async function readHead(client: S3Client, store: S3Store, id: string): Promise<RawHead> {
  const text = await readRaw(client, store, `s/${id}/head`);
  if (text === undefined) throw new Error(`no head for ${id}`);
  return JSON.parse(text) as RawHead;
}

const pad = (n: number) => String(n).padStart(12, '0');
export const versionKey = (id: string, gen: string, n: number) => `s/${id}/g/${gen}/v/${pad(n)}`;
export const textKey = (id: string, gen: string, n: number) => `s/${id}/g/${gen}/t/${pad(n)}`;
export const foldTextKey = (id: string, gen: string, n: number) => `s/${id}/g/${gen}/ft/${pad(n)}`;
export const foldKey = (id: string, gen: string, n: number) => `s/${id}/g/${gen}/f/${pad(n)}`;
