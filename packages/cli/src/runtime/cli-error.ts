import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * An error the command reports as one line (`sessionkit <command>: <message>`) and turns
 * into an exit code. `message` says what failed, on which store (credentials removed) and
 * what to do; `cause` is shown only with `--debug`.
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode = EXIT.failure, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A usage error (exit 2): the command line asked for something that cannot be done. */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.usage);
}

/** True for the rejection an aborted `AbortSignal` produces (Ctrl-C at a safe point). */
export function isAbortError(e: unknown): boolean {
  return (
    e instanceof Error &&
    (e.name === 'AbortError' || (e as { code?: unknown }).code === 'ABORT_ERR')
  );
}
