// The PostgreSQL the benchmarks use: $SESSIONKIT_TEST_POSTGRES_URL, else the repository's
// .env.example (the one source of the test services' URLs), else the local default.
import { readFileSync } from 'node:fs';

/** The benchmark server's connection string. */
export function benchPostgresUrl() {
  return (
    process.env.SESSIONKIT_TEST_POSTGRES_URL ||
    /^SESSIONKIT_TEST_POSTGRES_URL=(.*)$/m.exec(
      readFileSync(new URL('../../../.env.example', import.meta.url), 'utf8'),
    )?.[1] ||
    'postgres://postgres@127.0.0.1:5432/test'
  );
}
