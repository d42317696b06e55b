// @sessionkit/redis: one store shared by every process of a gateway. Two stores on one
// Redis (as two processes would have) see each other's writes at once; `ttlSeconds` lets
// a whole conversation expire together after its last write. REDIS_URL picks the server
// (default the local one); SESSIONKIT_EXAMPLE_PREFIX the key prefix.
import { newSession } from '@sessionkit/core';
import { KeySpace, RedisStore } from '@sessionkit/redis';
import { Redis } from 'ioredis';

const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = process.env.SESSIONKIT_EXAMPLE_PREFIX || 'sessionkit-example:';
const client = new Redis(url);
client.on('error', (e) => console.error('redis:', e.message)); // ioredis reports outages here

// A day without a write and the conversation is gone, every key of it together.
const gatewayA = new RedisStore({ client, prefix, ttlSeconds: 86_400 });
const gatewayB = new RedisStore({ client, prefix, ttlSeconds: 86_400 });
try {
  const session = await gatewayA.create(newSession({ folder: '/chat', title: 'Flight change' }));
  await gatewayA.commit(session.id, {
    expectedRevision: session.revision,
    append: [
      { role: 'user', content: 'Move my flight to Friday.' },
      { role: 'assistant', content: 'Done: LH 400 on Friday at 10:05.' },
    ],
    increment: { turnCount: 1 },
  });
  // The other process sees the turn and finds it by search (case-insensitive).
  const hits = await gatewayB.list({ query: 'lh 400' });
  console.log(`gateway B found ${session.id}: ${hits.some((s) => s.id === session.id)}`);
  const ttl = await client.ttl(new KeySpace(prefix).session(session.id).meta);
  console.log(`expires in about a day: ${ttl > 86_000 && ttl <= 86_400}`);
  await gatewayB.delete(session.id);
  console.log(
    `deleted, gateway A sees it: ${(await gatewayA.list({ query: 'lh 400' })).length > 0}`,
  );
} finally {
  await gatewayA.close();
  await gatewayB.close();
  await client.quit();
}
