import type { S3Client } from '@aws-sdk/client-s3';
import { type ConformanceInitializer, runConformance } from '@sessionkit/conformance';
import { registerStoreAdapter } from '@sessionkit/core/adapter';
import { type S3Store, storeAdapter } from '../src/index.js';
import { destroyStore, freshPrefix, releaseClient, storeOn } from './harness.js';
import { deleteRaw, foldKey, readHead, readRaw, textKey, versionKey, writeRaw } from './raw.js';
import { type S3Target, startTarget, testClient } from './support/s3-server.js';

// openStore finds s3: URLs itself (the built package); registering the source's adapter
// makes the open-store spec test this code.
registerStoreAdapter(storeAdapter);

let target: S3Target | undefined;
let raw: S3Client | undefined;
const t = () => {
  if (target === undefined) throw new Error('the S3 target is not started');
  return target;
};
const r = () => {
  raw ??= testClient(t().endpoint);
  return raw;
};

/** The shard object holding `id`'s entry, found by reading every shard. */
async function shardHolding(
  store: S3Store,
  id: string,
): Promise<{ key: string; doc: { entries: Record<string, Record<string, unknown>> } }> {
  const shards = JSON.parse((await readRaw(r(), store, 'sessionkit.json')) ?? '{}').indexShards;
  for (let k = 0; k < shards; k++) {
    const key = `index/${String(k).padStart(3, '0')}.json`;
    const text = await readRaw(r(), store, key);
    if (text === undefined) continue;
    const doc = JSON.parse(text);
    if (Object.hasOwn(doc.entries, id)) return { key, doc };
  }
  throw new Error(`no index entry for ${id}`);
}

export const s3Initializer: ConformanceInitializer<S3Store> = {
  name: 's3',
  beforeAll: async () => {
    target = await startTarget();
    // openStore's owned clients read credentials from the environment.
    process.env.AWS_ACCESS_KEY_ID ??= process.env.SESSIONKIT_TEST_S3_ACCESS_KEY_ID ?? 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY ??=
      process.env.SESSIONKIT_TEST_S3_SECRET_ACCESS_KEY ?? 'S3RVER';
  },
  afterAll: async () => {
    raw?.destroy();
    raw = undefined;
    if (target) releaseClient(target);
    await target?.stop();
    target = undefined;
  },
  create: () => storeOn(t()),
  createPeer: (store) => storeOn(t(), store.prefix),
  destroy: (store) => destroyStore(t(), store),
  openUrl: () =>
    `s3://${t().bucket}/${freshPrefix(t())}?endpoint=${encodeURIComponent(t().endpoint)}&forcePathStyle=true&region=us-east-1`,
  probes: {
    // GETs of objects that hold messages (versions, snapshots): listing reads index
    // shards and search-text objects only.
    messageBodyReads: (store) => store.stats.bodyReads,
  },
  faults: {
    damageIndex: async (store, id, kind) => {
      const { key, doc } = await shardHolding(store, id);
      if (kind === 0) {
        // A stale entry: wrong title, count and time.
        const entry = doc.entries[id] as { header: Record<string, unknown>; messageCount: number };
        entry.header = { ...entry.header, title: 'stale', updatedAt: 0 };
        entry.messageCount = 0;
      } else if (kind === 1) {
        // The entry lost: the session is still stored.
        delete doc.entries[id];
      } else {
        // The search text of the newest messages emptied (one empty text per message).
        const head = await readHead(r(), store, id);
        const { base, parts } = head.state.chain;
        const last = parts.at(-1)?.n ?? base.n;
        const count =
          head.state.messageCount - (parts.at(-2)?.end ?? (parts.length ? base.count : 0));
        const texts = Array.from({ length: count }, () => '');
        await writeRaw(
          r(),
          store,
          textKey(id, head.gen, last),
          JSON.stringify({ format: 2, texts }),
        );
        return;
      }
      await writeRaw(r(), store, key, JSON.stringify(doc));
    },
    indexDamageKinds: 3,
    corruptSession: async (store, id, kind) => {
      const head = await readHead(r(), store, id);
      const base = head.state.chain.base;
      const key = base.folded ? foldKey(id, head.gen, base.n) : versionKey(id, head.gen, base.n);
      if (kind === 0) {
        // The object holding the messages cut short (a torn upload by another tool).
        const text = (await readRaw(r(), store, key)) ?? '';
        await writeRaw(r(), store, key, text.slice(0, Math.floor(text.length / 2)));
      } else {
        // The object holding the messages lost.
        await deleteRaw(r(), store, key);
      }
    },
    corruptionKinds: 2,
  },
  // Every write of a conformance test is followed by a list and a load (the listing
  // invariant), each several S3 round trips: heavy tests need more than the default.
  timeoutMs: 180_000,
};

runConformance(s3Initializer);
