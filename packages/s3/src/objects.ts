// The S3 requests the store makes, in one place: every call counted, every failure
// wrapped, conditional writes reported as outcomes rather than exceptions.
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { errors, httpStatusOf, s3CodeOf, wrapS3Error } from './errors.js';

/** A stored object's text and ETag. */
export interface StoredObject {
  text: string;
  etag: string;
}

/** A key found by a listing, with its last modification time. */
export interface ListedKey {
  key: string;
  lastModified: Date | undefined;
}

/**
 * How a conditional write ended: written (with the new ETag), `failed` (412: the condition
 * did not hold, or 404 on `If-Match` for a missing key) or `busy` (409: another
 * conditional write on that key was in flight; retry).
 */
export type WriteOutcome =
  | { written: true; etag: string }
  | { written: false; why: 'failed' | 'busy' };

/** A write condition: create only if absent, or replace only if the ETag is unchanged. */
export type WriteCondition = { ifAbsent: true } | { ifMatch: string } | undefined;

/**
 * Request counters (they only grow). `bodyReads` counts GETs of message-holding objects;
 * `putBytes` the bytes of every PUT body sent (refused conditional writes included).
 */
export interface RequestStats {
  get: number;
  put: number;
  list: number;
  delete: number;
  bodyReads: number;
  putBytes: number;
}

/** What the store reads of a GET's body. */
interface ResponseBody {
  transformToString(encoding: string): Promise<string>;
  transformToByteArray(): Promise<Uint8Array>;
}

/** A missing body read as empty. */
const EMPTY_BODY: ResponseBody = {
  transformToString: async () => '',
  transformToByteArray: async () => new Uint8Array(0),
};

/** The bucket and key prefix the store keeps its objects under, with counted requests. */
export class ObjectIO {
  readonly stats: RequestStats = {
    get: 0,
    put: 0,
    list: 0,
    delete: 0,
    bodyReads: 0,
    putBytes: 0,
  };

  constructor(
    readonly client: S3Client,
    readonly bucket: string,
    /** `""` or a prefix ending in `/`. */
    readonly prefix: string,
  ) {}

  /** The object's text and ETag, or undefined when there is none. Throws `unavailable`. */
  async get(key: string, doing: string): Promise<StoredObject | undefined> {
    const got = await this.#send(key, doing, (body) => body.transformToString('utf-8'));
    return got && { text: got.body, etag: got.etag };
  }

  /**
   * The object's bytes, or undefined when there is none (search-text objects, which may be
   * compressed). Throws `unavailable`.
   */
  async getBytes(key: string, doing: string): Promise<Uint8Array | undefined> {
    return (await this.#send(key, doing, (body) => body.transformToByteArray()))?.body;
  }

  /** A GET of `key`, its body read by `read`; undefined when there is no object. */
  async #send<T>(
    key: string,
    doing: string,
    read: (body: ResponseBody) => Promise<T>,
  ): Promise<{ body: T; etag: string } | undefined> {
    this.stats.get++;
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
      );
      return { body: await read(out.Body ?? EMPTY_BODY), etag: out.ETag ?? '' };
    } catch (e) {
      if (httpStatusOf(e) === 404 && s3CodeOf(e) !== 'NoSuchBucket') return undefined;
      throw wrapS3Error(e, doing);
    }
  }

  /** `get` of an object that holds message bodies (counted for the listing probes). */
  async getBody(key: string, doing: string): Promise<StoredObject | undefined> {
    const got = await this.get(key, doing);
    if (got !== undefined) this.stats.bodyReads++;
    return got;
  }

  /**
   * Writes `text` at `key` (a string as UTF-8 JSON, bytes as they are), under `condition`
   * when given (`If-None-Match: *` or `If-Match: etag`). `abortAfterMs` abandons the
   * request after that long (it then may or may not have landed: `unavailable`). Throws
   * `unavailable` when the server cannot be reached.
   */
  async put(
    key: string,
    text: string | Uint8Array,
    condition: WriteCondition,
    doing: string,
    abortAfterMs?: number,
  ): Promise<WriteOutcome> {
    this.stats.put++;
    // A Buffer: its length is known, so the SDK sends it in one piece.
    const body =
      typeof text === 'string'
        ? Buffer.from(text, 'utf8')
        : Buffer.from(text.buffer, text.byteOffset, text.byteLength);
    this.stats.putBytes += body.length;
    try {
      const out = await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.prefix + key,
          Body: body,
          ContentType: typeof text === 'string' ? 'application/json' : 'application/octet-stream',
          ...(condition && 'ifAbsent' in condition ? { IfNoneMatch: '*' } : {}),
          ...(condition && 'ifMatch' in condition ? { IfMatch: condition.ifMatch } : {}),
        }),
        abortAfterMs === undefined
          ? {}
          : { abortSignal: AbortSignal.timeout(Math.max(1, Math.ceil(abortAfterMs))) },
      );
      return { written: true, etag: out.ETag ?? '' };
    } catch (e) {
      const status = httpStatusOf(e);
      if (condition !== undefined && status === 412) return { written: false, why: 'failed' };
      if (condition !== undefined && status === 409) return { written: false, why: 'busy' };
      if (condition !== undefined && 'ifMatch' in condition && status === 404) {
        return { written: false, why: 'failed' };
      }
      throw wrapS3Error(e, doing);
    }
  }

  /** Writes `text` at `key` unconditionally. */
  async putPlain(key: string, text: string | Uint8Array, doing: string): Promise<string> {
    const out = await this.put(key, text, undefined, doing);
    if (!out.written) throw errors.unavailable(`${doing}: write refused`);
    return out.etag;
  }

  /** Removes `key` (a missing key is not an error). */
  async delete(key: string, doing: string): Promise<void> {
    this.stats.delete++;
    try {
      await this.client.send(
        new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
      );
    } catch (e) {
      if (httpStatusOf(e) === 404 && s3CodeOf(e) !== 'NoSuchBucket') return;
      throw wrapS3Error(e, doing);
    }
  }

  /** Removes many keys, 1000 per request. */
  async deleteMany(keys: string[], doing: string): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      this.stats.delete++;
      try {
        const out = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: batch.map((k) => ({ Key: this.prefix + k })), Quiet: true },
          }),
        );
        if (out.Errors && out.Errors.length > 0) {
          throw errors.unavailable(`${doing}: ${out.Errors.length} objects were not deleted`);
        }
      } catch (e) {
        throw wrapS3Error(e, doing);
      }
    }
  }

  /** The "folders" directly under `under` (ListObjectsV2 with a `/` delimiter), ascending. */
  async listFolders(under: string, doing: string): Promise<string[]> {
    const found: string[] = [];
    let token: string | undefined;
    do {
      this.stats.list++;
      try {
        const out = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + under,
            Delimiter: '/',
            ContinuationToken: token,
          }),
        );
        for (const p of out.CommonPrefixes ?? []) {
          if (p.Prefix !== undefined) found.push(p.Prefix.slice(this.prefix.length));
        }
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } catch (e) {
        throw wrapS3Error(e, doing);
      }
    } while (token !== undefined);
    return found;
  }

  /**
   * Keys under `under` (relative to the store prefix), ascending, after `startAfter` when
   * given, at most `max` (default all: one request per 1000 keys).
   */
  async list(
    under: string,
    doing: string,
    options: { startAfter?: string | undefined; max?: number | undefined } = {},
  ): Promise<ListedKey[]> {
    const found: ListedKey[] = [];
    let token: string | undefined;
    const max = options.max ?? Number.POSITIVE_INFINITY;
    do {
      this.stats.list++;
      try {
        const out = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + under,
            ContinuationToken: token,
            ...(token === undefined && options.startAfter !== undefined
              ? { StartAfter: this.prefix + options.startAfter }
              : {}),
            MaxKeys: Math.min(1000, max - found.length),
          }),
        );
        for (const item of out.Contents ?? []) {
          if (item.Key === undefined) continue;
          found.push({ key: item.Key.slice(this.prefix.length), lastModified: item.LastModified });
        }
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } catch (e) {
        throw wrapS3Error(e, doing);
      }
    } while (token !== undefined && found.length < max);
    return found;
  }
}
