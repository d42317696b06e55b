import { isSessionKitError } from '@sessionkit/core';
import { CliError, isAbortError } from './cli-error.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { redactText } from './redact.js';

/** What to do about each sessionkit error code, appended to the one-line message. */
const ADVICE: Record<string, string> = {
  unavailable: 'check that the store is running and reachable, then run the command again',
  not_found: 'check the id (sessionkit list shows the ids)',
  exists: 'the target already has that session; use --on-existing skip or replace',
  conflict: 'the session changed meanwhile; run the command again',
  merge_diverged: 'the parent changed after the branch point',
  too_large: 'the value is over a store limit',
  invalid_argument: 'check the arguments and the store URL (sessionkit <command> --help)',
  corrupt: 'run sessionkit repair, or restore the data from an export',
  closed: 'the store was closed; run the command again',
};

/** One failure, ready to print: the line and the exit code. */
export interface FailureReport {
  line: string;
  exitCode: ExitCode;
  /** Stack and causes, printed only with `--debug`. */
  detail: string;
}

/**
 * Turns any error into one line `sessionkit <command>: <what failed>[ (store URL)] — <what
 * to do>` and an exit code: `invalid_argument` is a usage error (2), an abort is 130,
 * a `CliError` keeps its own code, everything else is a failure (1). Credentials in any
 * URL of the message are removed.
 */
export function describeFailure(e: unknown, command: string, storeUrl?: string): FailureReport {
  const where = storeUrl === undefined ? '' : ` (store ${storeUrl})`;
  let message: string;
  let exitCode: ExitCode = EXIT.failure;
  if (e instanceof CliError) {
    message = e.message;
    exitCode = e.exitCode;
  } else if (isAbortError(e)) {
    message = 'interrupted at a safe point; run the same command again to resume';
    exitCode = EXIT.interrupted;
  } else if (isSessionKitError(e)) {
    const advice = ADVICE[e.code];
    message = `${oneLine(e.message)}${where}${advice ? ` — ${advice}` : ''}`;
    if (e.code === 'invalid_argument') exitCode = EXIT.usage;
  } else {
    message = `${e instanceof Error ? oneLine(e.message) : String(e)}${where}`;
  }
  return {
    line: redactText(`sessionkit ${command}: ${message}`),
    exitCode,
    detail: redactText(causeChain(e)),
  };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** The stack of `e` and of each `cause` under it, for `--debug`. */
function causeChain(e: unknown): string {
  const parts: string[] = [];
  let current: unknown = e;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    parts.push(current instanceof Error ? (current.stack ?? current.message) : String(current));
    current = current instanceof Error ? current.cause : undefined;
    if (current !== undefined) parts.push('caused by:');
  }
  return parts.join('\n');
}
