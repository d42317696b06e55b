import type { ProgressOptions } from '@sessionkit/core';
import type { Command } from 'commander';
import { onInterrupt } from './interrupt.js';
import { createProgressView, progressMode } from './progress.js';
import { chooseStoreUrl } from './store-url.js';

/** The options every command accepts (declared on the program). */
export interface GlobalOptions {
  store?: string | undefined;
  debug?: boolean | undefined;
  quiet?: boolean | undefined;
  progress?: string | undefined;
  progressInterval?: number | undefined;
}

/** The global options as seen from `command`. */
export function globalsOf(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

/** The store URL `command` works on: `--store`, `$SESSIONKIT_STORE_URL` or the default. */
export function storeUrlOf(command: Command): string {
  return chooseStoreUrl(globalsOf(command).store);
}

/**
 * Runs a long operation with a progress view (bar on a terminal, lines otherwise, none
 * with `--quiet`) and Ctrl-C wired to an `AbortSignal`. `work` gets the `onProgress` and
 * `signal` to hand to core's helpers.
 */
export async function runLong<T>(
  command: Command,
  label: string,
  work: (options: Required<ProgressOptions>) => Promise<T>,
): Promise<T> {
  const globals = globalsOf(command);
  const view = await createProgressView(
    label,
    progressMode(globals.progress, globals.quiet === true),
    globals.progressInterval,
  );
  const interrupt = onInterrupt(label);
  let completed = false;
  try {
    const result = await work({ onProgress: (p) => view.report(p), signal: interrupt.signal });
    completed = true;
    return result;
  } finally {
    view.finish(completed);
    interrupt.dispose();
  }
}
