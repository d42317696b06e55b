import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { Message, Store } from '@sessionkit/core';
import {
  assertKnownKeys,
  LOST_RACE,
  retryLostRaces,
  type StoreAdapter,
} from '@sessionkit/core/adapter';
import { FORMAT, parseJson } from './codec.js';
import { errors } from './errors.js';
import { META_KEY, PROBE_KEY } from './keys.js';
import { ObjectIO } from './objects.js';
import { SessionIndex } from './session-index.js';
import { S3Store } from './store.js';
import { parseS3Url } from './url-options.js';

/** Index shards of a new store unless `indexShards` says otherwise. */
export const DEFAULT_INDEX_SHARDS = 4;

/** Options of `openS3Store`. */
export interface OpenS3StoreOptions {
  /** The bucket (must exist). Required. */
  bucket: string;
  /** Key prefix of every object of the store; a `/` is added when missing. Default `""`. */
  prefix?: string | undefined;
  /** A client to borrow: `close()` leaves it open. Give this or `clientConfig`. */
  client?: S3Client | undefined;
  /**
   * Settings for a client the store makes and owns (`close()` destroys it). Checksums
   * default to `WHEN_REQUIRED`, which every S3-compatible server accepts.
   */
  clientConfig?: S3ClientConfig | undefined;
  /**
   * Index shards of a NEW store (1–256; default 4). An existing store keeps the count
   * it was created with. More shards: less contention between writers of different
   * sessions, more requests per `list`.
   */
  indexShards?: number | undefined;
  /**
   * Opens even when the server ignores conditional writes. Concurrent writers can then
   * silently lose each other's updates: only for a single writer. Default false.
   */
  acceptLostUpdates?: boolean | undefined;
  /**
   * The grace of superseded objects of a NEW store, in ms (1,000–3,600,000; default
   * 60,000): a version object a fold superseded is removed once the head has named a later
   * version for this long, and every writer lands its version within half of it after it
   * read the head (its version PUT is abandoned after that, `unavailable`). An existing
   * store keeps the grace it was created with: every writer of a bucket must agree on it.
   */
  pruneGraceMs?: number | undefined;
}

/** The grace of superseded objects unless `pruneGraceMs` says otherwise. */
export const DEFAULT_PRUNE_GRACE_MS = 60_000;

const validGrace = (g: unknown) =>
  Number.isSafeInteger(g) && (g as number) >= 1000 && (g as number) <= 3_600_000;

const OPTION_KEYS = [
  'bucket',
  'prefix',
  'client',
  'clientConfig',
  'indexShards',
  'acceptLostUpdates',
  'pruneGraceMs',
];

/**
 * Proves the server honours conditional writes: a create-only PUT (`If-None-Match: *`)
 * on an existing key and a PUT with a wrong `If-Match` must both be refused with 412.
 */
async function checkConditionalWrites(io: ObjectIO): Promise<string | undefined> {
  const doing = 'checking conditional writes';
  await io.putPlain(
    PROBE_KEY,
    JSON.stringify({ format: FORMAT, note: 'conditional-write check' }),
    doing,
  );
  const create = await io.put(PROBE_KEY, '{"format":1}', { ifAbsent: true }, doing);
  if (create.written) return 'a PUT with If-None-Match: * replaced an existing object';
  const swap = await io.put(
    PROBE_KEY,
    '{"format":1}',
    { ifMatch: '"00000000000000000000000000000000"' },
    doing,
  );
  if (swap.written) return 'a PUT with a wrong If-Match replaced the object';
  return undefined;
}

/** What the store's descriptor fixes for every writer of the store. */
interface StoreMeta {
  indexShards: number;
  pruneGraceMs: number;
}

/**
 * The store's descriptor: created on first open, read afterwards. A descriptor of the
 * previous release names no grace: such a store has the default.
 */
async function readOrCreateMeta(io: ObjectIO, wanted: StoreMeta): Promise<StoreMeta> {
  const doing = 'opening the store';
  const exhausted = () => errors.unavailable(`${doing}: the store descriptor keeps changing`);
  return retryLostRaces(
    { errors, operation: 'open', sessionId: META_KEY, maxRetries: 4, exhausted },
    async () => {
      const got = await io.get(META_KEY, doing);
      if (got !== undefined) {
        try {
          const meta = parseJson(got.text, 'store descriptor');
          const n = meta.indexShards;
          if (!Number.isSafeInteger(n) || (n as number) < 1 || (n as number) > 256)
            throw new Error('bad indexShards');
          const grace = meta.pruneGraceMs ?? DEFAULT_PRUNE_GRACE_MS;
          if (!validGrace(grace)) throw new Error('bad pruneGraceMs');
          return { indexShards: n as number, pruneGraceMs: grace as number };
        } catch (e) {
          throw errors.make(
            'corrupt',
            `the store descriptor ${META_KEY} is unreadable: ${(e as Error).message}`,
          );
        }
      }
      const text = JSON.stringify({ format: FORMAT, ...wanted });
      return (await io.put(META_KEY, text, { ifAbsent: true }, doing)).written ? wanted : LOST_RACE;
    },
  );
}

/**
 * Opens a store on `options.bucket` under `options.prefix`, borrowing `options.client`
 * or making one from `options.clientConfig`. Before it resolves it proves that the
 * server honours conditional writes, and refuses (`invalid_argument`, naming what it
 * saw) when it does not, unless `acceptLostUpdates: true`: a silent lost update is the
 * failure this store exists to prevent. Throws `invalid_argument` (bad options, missing
 * bucket, access denied), `unavailable` (server unreachable), `corrupt` (unreadable
 * descriptor). An owned client is destroyed when opening fails.
 */
export async function openS3Store<M = Message>(options: OpenS3StoreOptions): Promise<S3Store<M>> {
  if (typeof options !== 'object' || options === null)
    throw errors.invalid('openS3Store: options must be an object');
  assertKnownKeys(errors, options, OPTION_KEYS, 'openS3Store');
  const { bucket, client, clientConfig, acceptLostUpdates = false } = options;
  if (typeof bucket !== 'string' || bucket === '')
    throw errors.invalid('openS3Store: bucket must be a non-empty string');
  if ((client === undefined) === (clientConfig === undefined)) {
    throw errors.invalid('openS3Store: give either client (borrowed) or clientConfig (owned)');
  }
  const shards = options.indexShards ?? DEFAULT_INDEX_SHARDS;
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > 256) {
    throw errors.invalid(
      `openS3Store: indexShards must be an integer from 1 to 256, got ${String(shards)}`,
    );
  }
  const grace = options.pruneGraceMs ?? DEFAULT_PRUNE_GRACE_MS;
  if (!validGrace(grace)) {
    throw errors.invalid(
      `openS3Store: pruneGraceMs must be an integer from 1000 to 3600000, got ${String(grace)}`,
    );
  }
  if (typeof acceptLostUpdates !== 'boolean')
    throw errors.invalid('openS3Store: acceptLostUpdates must be a boolean');
  let prefix = options.prefix ?? '';
  if (typeof prefix !== 'string') throw errors.invalid('openS3Store: prefix must be a string');
  prefix = prefix.replace(/^\/+/, '');
  if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
  const owned =
    client === undefined
      ? new S3Client({
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
          ...clientConfig,
        })
      : undefined;
  const io = new ObjectIO(client ?? (owned as S3Client), bucket, prefix);
  try {
    if (!acceptLostUpdates) {
      const problem = await checkConditionalWrites(io);
      if (problem !== undefined) {
        throw errors.invalid(
          `openS3Store: the S3 server does not honour conditional writes (${problem}); concurrent writers would silently lose updates. Use a server that does (AWS S3, MinIO, Cloudflare R2), or pass acceptLostUpdates: true for a single writer`,
        );
      }
    }
    const meta = await readOrCreateMeta(io, { indexShards: shards, pruneGraceMs: grace });
    return new S3Store<M>({
      io,
      index: new SessionIndex(io, meta.indexShards),
      ownedClient: owned,
      pruneGraceMs: meta.pruneGraceMs,
    });
  } catch (e) {
    owned?.destroy();
    throw e;
  }
}

/**
 * Opens `s3://bucket/prefix` URLs for core's `openStore`. Query options: `endpoint`
 * (e.g. `http://127.0.0.1:9000` for MinIO), `region` (default: the SDK's, else
 * `us-east-1`), `forcePathStyle=true|false`, `indexShards=N` (new stores),
 * `acceptLostUpdates=true` (see `openS3Store`); any other is `invalid_argument`.
 * `options` may carry `clientConfig` (merged under the URL's settings, e.g.
 * credentials). The store owns its client.
 */
export const storeAdapter: StoreAdapter = {
  schemes: ['s3'],
  async open(url: URL, options?: Record<string, unknown>): Promise<Store<Message>> {
    assertKnownKeys(errors, options, ['clientConfig'], 'openStore(s3:)');
    const parsed = parseS3Url(url);
    const clientConfig: S3ClientConfig = {
      region: parsed.region ?? process.env.AWS_REGION ?? 'us-east-1',
      ...(options?.clientConfig as S3ClientConfig | undefined),
      ...(parsed.endpoint !== undefined ? { endpoint: parsed.endpoint } : {}),
      ...(parsed.forcePathStyle !== undefined ? { forcePathStyle: parsed.forcePathStyle } : {}),
    };
    if (parsed.region !== undefined) clientConfig.region = parsed.region;
    return openS3Store<Message>({
      bucket: parsed.bucket,
      prefix: parsed.prefix,
      clientConfig,
      indexShards: parsed.indexShards,
      acceptLostUpdates: parsed.acceptLostUpdates,
    });
  },
};
