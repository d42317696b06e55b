// Names that reach SQL as identifiers: the schema name (checked, then always quoted) and
// the advisory-lock class of sessionkit's locks.
import type { ErrorFactory } from '@sessionkit/core/adapter';

/** The schema a store uses when none is given. */
export const DEFAULT_SCHEMA = 'sessionkit';

// Unquoted-identifier rules, at most 63 bytes (PostgreSQL's NAMEDATALEN - 1).
const SCHEMA_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Throws `invalid_argument` unless `schema` is a plain identifier: a letter or `_`, then
 * letters, digits or `_`, at most 63 characters. It is always double-quoted in SQL too.
 */
export function assertSchemaName(errors: ErrorFactory, schema: unknown): asserts schema is string {
  if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema) || schema.startsWith('pg_')) {
    throw errors.invalid(
      `schema must be 1–63 chars of [A-Za-z0-9_], starting with a letter or "_" and not with "pg_", got ${JSON.stringify(String(schema)).slice(0, 80)}`,
    );
  }
}

/** `"name"` with embedded quotes doubled (names are validated too; this is defence in depth). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The first key of every sessionkit advisory lock (`pg_advisory_xact_lock(class, object)`):
 * the object is `hashtext(schema)` for a schema's migrations (migrations/runner.ts) and
 * `0` for `CREATE EXTENSION pg_trgm` (trigram.ts).
 */
export const ADVISORY_LOCK_CLASS = 0x5e55;
