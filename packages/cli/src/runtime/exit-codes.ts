/**
 * The exit codes of `sessionkit`, documented in the README. Scripts depend on them, so
 * they never change meaning.
 */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** The operation failed: the store is unreachable, an adapter is missing, data is corrupt … */
  failure: 1,
  /** The command line is wrong: unknown command or option, a bad value, a malformed store URL. */
  usage: 2,
  /** `migrate` (or `migrate --verify-only`) found the target different from the source. */
  mismatch: 3,
  /** Stopped by Ctrl-C (SIGINT) at a safe point; run the same command again to resume. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
