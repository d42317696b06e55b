// Where the service-backed tests find Redis: $SESSIONKIT_TEST_REDIS_URL, else the default
// in the repository's .env.example (one source of truth for connection strings).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

const ENV_FILE = fileURLToPath(new URL('../../../.env.example', import.meta.url));
const VAR = 'SESSIONKIT_TEST_REDIS_URL';

function fromEnvFile(): string | undefined {
  let text: string;
  try {
    text = readFileSync(ENV_FILE, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const m = /^\s*SESSIONKIT_TEST_REDIS_URL\s*=\s*(.*?)\s*$/.exec(line);
    if (m?.[1]) return m[1].replace(/^["']|["']$/g, '');
  }
  return undefined;
}

/** The URL of the standalone test server. */
export const REDIS_URL = process.env[VAR] || fromEnvFile() || 'redis://127.0.0.1:6379';

export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

const HOW_TO_START = `Start Redis 7 on 127.0.0.1:6379 (e.g. "redis-server --daemonize yes --save '' --appendonly no"), or point ${VAR} at one.`;

async function probe(): Promise<string | undefined> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  } finally {
    client.disconnect();
  }
}

const reason = await probe();

/**
 * True when the standalone Redis answers. When it does not: under CI this throws (the test
 * file fails, saying how to start it); elsewhere it warns loudly and returns false.
 */
export function redisAvailable(what: string): boolean {
  if (reason === undefined) return true;
  const message = `[sessionkit/redis tests] Redis at ${REDIS_URL.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@')} is unreachable (${reason}); ${what}. ${HOW_TO_START}`;
  if (IN_CI) throw new Error(`${message} (CI=true: failing instead of skipping)`);
  console.warn(`\n!!! SKIPPED: ${message}\n`);
  return false;
}
