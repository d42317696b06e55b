import { CommanderError } from 'commander';
import { buildProgram } from './program.js';
import { EXIT } from './runtime/exit-codes.js';
import { describeFailure } from './runtime/report-error.js';
import { runState } from './runtime/run-state.js';

/** Commander's own exits: help and version are successes, everything else a usage error. */
function commanderExit(e: CommanderError): number {
  if (e.exitCode === 0) return EXIT.ok;
  return EXIT.usage;
}

/**
 * Runs `sessionkit` with `argv` (as `process.argv`: node, script, then arguments) and
 * resolves with the exit code. Never rejects: every failure is printed to stderr as one
 * line (`--debug` or `SESSIONKIT_DEBUG=1` adds the stack) and becomes an exit code.
 */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) return commanderExit(e);
    const report = describeFailure(e, runState.command || 'sessionkit', runState.store);
    process.stderr.write(`${report.line}\n`);
    const debug = program.opts().debug === true || process.env.SESSIONKIT_DEBUG === '1';
    if (debug) process.stderr.write(`${report.detail}\n`);
    return report.exitCode;
  }
}
