// PostgreSQL for the tests: the URL from $SESSIONKIT_TEST_POSTGRES_URL or .env.example, a
// fresh schema per test (`?schema=`), dropped afterwards.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const VAR = 'SESSIONKIT_TEST_POSTGRES_URL';

function fromEnvFile(): string | undefined {
  try {
    const text = readFileSync(
      fileURLToPath(new URL('../../../../.env.example', import.meta.url)),
      'utf8',
    );
    const m = /^\s*SESSIONKIT_TEST_POSTGRES_URL\s*=\s*(.*?)\s*$/m.exec(text);
    return m?.[1]?.replace(/^["']|["']$/g, '');
  } catch {
    return undefined;
  }
}

/** The test server's connection string. */
export const POSTGRES_URL =
  process.env[VAR] || fromEnvFile() || 'postgres://postgres@127.0.0.1:5432/test';

const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

async function probe(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  } finally {
    await client.end().catch(() => {});
  }
}

const unreachable = await probe();

/**
 * True when PostgreSQL answers. Under CI a missing server fails the file (with how to
 * start it); elsewhere it warns loudly and the caller skips.
 */
export function postgresAvailable(what: string): boolean {
  if (unreachable === undefined) return true;
  const message = `[sessionkit/cli tests] PostgreSQL is unreachable (${unreachable}); ${what}. Start PostgreSQL 15+ with a "test" database or set ${VAR}.`;
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPED: ${message}\n`);
  return false;
}

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `sk_cli_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** The store URL of `schema` on the test server. */
export function storeUrl(schema: string): string {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.href;
}

/** Drops a test schema with everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
