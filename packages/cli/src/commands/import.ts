import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { importSessions, type OnExisting } from '@sessionkit/core';
import type { Command } from 'commander';
import { usageError } from '../runtime/cli-error.js';
import { runLong, storeUrlOf } from '../runtime/context.js';
import { withStore } from '../runtime/open.js';
import { writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { oneOf } from './parsers.js';

/**
 * Copies stdin into a private temp file (folder 0700, file 0600) and runs `work` on its
 * path: core's import reads its file twice (check, then import), which a pipe cannot do.
 * The file is removed afterwards.
 */
async function withSpooledStdin<T>(work: (path: string) => Promise<T>): Promise<T> {
  if (process.stdin.isTTY) {
    throw usageError(
      'give an export file, or pipe one into stdin (sessionkit import backup.jsonl)',
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'sessionkit-import-'));
  try {
    const path = join(dir, 'stdin.jsonl');
    await pipeline(process.stdin, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    return await work(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `import [file]`: sessions from an export file (or stdin) into the store. */
export function registerImport(program: Command): void {
  program
    .command('import')
    .argument('[file]', 'an export file; "-" or nothing for stdin')
    .description('import sessions from JSON Lines written by export')
    .option(
      '--on-existing <mode>',
      'a session the store already has: fail, skip (resume an interrupted import) or replace',
      oneOf<OnExisting>(['fail', 'skip', 'replace']),
      'fail',
    )
    .addHelpText(
      'after',
      `
The whole file is checked first: a bad line imports nothing. Ids, dates, trees, counters,
runtime status and events are kept. Ctrl-C stops between two sessions; run again with
--on-existing skip to finish without duplicates.

Examples:
  $ sessionkit import backup.jsonl --store postgres://app@db/app
  $ sessionkit import backup.jsonl --on-existing skip
  $ gunzip -c backup.jsonl.gz | sessionkit import -`,
    )
    .action((file: string | undefined, options: { onExisting: OnExisting }, command: Command) =>
      withStore(storeUrlOf(command), async ({ store, display }) => {
        runState.store = display;
        const run = (path: string) =>
          runLong(command, 'import', (progress) =>
            importSessions(store, path, { ...progress, onExisting: options.onExisting }),
          );
        const result =
          file === undefined || file === '-' ? await withSpooledStdin(run) : await run(file);
        await writeOut(
          `imported ${result.imported} sessions into ${display}${result.skipped > 0 ? `, skipped ${result.skipped} already there` : ''}\n`,
        );
      }),
    );
}
