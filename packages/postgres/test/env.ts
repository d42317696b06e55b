// Where the service-backed tests find PostgreSQL: $SESSIONKIT_TEST_POSTGRES_URL, else the
// default in the repository's .env.example (one source of truth for connection strings).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ENV_FILE = fileURLToPath(new URL('../../../.env.example', import.meta.url));
const VAR = 'SESSIONKIT_TEST_POSTGRES_URL';

function fromEnvFile(): string | undefined {
  let text: string;
  try {
    text = readFileSync(ENV_FILE, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const m = /^\s*SESSIONKIT_TEST_POSTGRES_URL\s*=\s*(.*?)\s*$/.exec(line);
    if (m?.[1]) return m[1].replace(/^["']|["']$/g, '');
  }
  return undefined;
}

/** The connection string of the test server. */
export const POSTGRES_URL =
  process.env[VAR] || fromEnvFile() || 'postgres://postgres@127.0.0.1:5432/test';

export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

const HOW_TO_START = `Start PostgreSQL 15+ on 127.0.0.1:5432 with a "test" database (e.g. "pg_ctlcluster 15 main start && createdb -U postgres test"), or point ${VAR} at one.`;

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

const reason = await probe();

/**
 * True when PostgreSQL answers. When it does not: under CI this throws (the test file
 * fails loudly, saying how to start the server); elsewhere it warns loudly and returns
 * false so the caller skips.
 */
export function postgresAvailable(what: string): boolean {
  if (reason === undefined) return true;
  const message = `[sessionkit/postgres tests] PostgreSQL at ${redact(POSTGRES_URL)} is unreachable (${reason}); ${what}. ${HOW_TO_START}`;
  if (IN_CI) throw new Error(`${message} (CI=true: failing instead of skipping)`);
  console.warn(`\n!!! SKIPPED: ${message}\n`);
  return false;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
}
