// Schema version 12: a session's `updated_at` stays within the dates a store keeps (years
// 1–9999, core's `MAX_DATE_MS`). A write moves `updated_at` one millisecond past the stored
// one when the clock has not moved past it, so a session created at
// 9999-12-31 23:59:59.999 would take year 10000, which no read accepts (the session would
// turn `corrupt`). The constraint makes that write fail (23514, mapped to
// `invalid_argument` by errors.ts) with nothing written, on every statement and function
// that writes a session, as core's `nextWriteTime` refuses it on the other adapters.
// `NOT VALID`: the upgrade scans no rows; one already past it (written before this
// version, and reported `corrupt` by reads) is left as it was.
import type { Migration } from './migration.js';

/** The constraint's name, which errors.ts recognises. */
export const UPDATED_AT_RANGE = 'sessions_updated_at_range';

/** Version 12 of the schema (see the top of this file). */
export const migration012: Migration = {
  version: 12,
  name: 'updated_at_range',
  sql: (s) => `
ALTER TABLE ${s}.sessions ADD CONSTRAINT ${UPDATED_AT_RANGE}
  CHECK (updated_at <= timestamptz '9999-12-31 23:59:59.999+00') NOT VALID;
`,
};
