/**
 * `@sessionkit/cli`: the `sessionkit` command, and the migration it is built on for
 * applications that want to move sessions between stores from code.
 */

export { main } from './main.js';
export {
  DEFAULT_CONCURRENCY,
  DEFAULT_PAGE_SIZE,
  type MigrateOptions,
  type MigrateResult,
  migrateSessions,
} from './migrate/copy.js';
export { canonicalJson, type SessionDigestParts, sessionDigest } from './migrate/digest.js';
export { type CopyOutcome, copySession } from './migrate/session-copy.js';
export {
  MAX_REPORTED,
  type Mismatch,
  type VerifyResult,
  verifyMigration,
} from './migrate/verify.js';
export { buildProgram } from './program.js';
export { CliError } from './runtime/cli-error.js';
export { EXIT, type ExitCode } from './runtime/exit-codes.js';
export { chooseStoreUrl, STORE_URL_ENV } from './runtime/store-url.js';
export {
  DEFAULT_VIEWER_PORT,
  startViewer,
  type Viewer,
  type ViewerOptions,
} from './serve/server.js';
