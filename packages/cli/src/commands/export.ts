import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportSessions,
  listRows,
  type ProgressOptions,
  type Store,
} from '@sessionkit/core';
import type { Command } from 'commander';
import { readSessionRecord } from '../migrate/session-record.js';
import { runLong, storeUrlOf } from '../runtime/context.js';
import { withStore } from '../runtime/open.js';
import { writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { integerIn } from './parsers.js';

interface ExportOptions {
  folder?: string;
  pageSize: number;
}

/**
 * Writes the export format of core's `exportSessions` to stdout (which cannot be renamed
 * into place): the header line, then one line per session, newest first.
 */
async function exportToStdout(
  store: Store,
  options: ExportOptions,
  progress: Required<ProgressOptions>,
): Promise<number> {
  await writeOut(
    `${JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: new Date() })}\n`,
  );
  let exported = 0;
  const walk = { pageSize: options.pageSize, where: 'export', folder: options.folder };
  for await (const row of listRows(store, walk)) {
    progress.signal.throwIfAborted();
    const record = await readSessionRecord(store, row.id);
    if (record === undefined) continue; // deleted meanwhile
    const line: Record<string, unknown> = { session: record.session };
    if (record.runtimeStatus !== null) line.runtimeStatus = record.runtimeStatus;
    if (record.events.length > 0) line.events = record.events;
    await writeOut(`${JSON.stringify(line)}\n`);
    exported++;
    progress.onProgress({ phase: 'export', done: exported });
  }
  return exported;
}

/** `export [file]`: every session as JSON Lines, to a file (atomically) or stdout. */
export function registerExport(program: Command): void {
  program
    .command('export')
    .argument('[file]', 'where to write; "-" or nothing for stdout')
    .description('export sessions (with runtime status and events) as JSON Lines')
    .option('--folder <folder>', 'only sessions of this workspace folder')
    .option('--page-size <n>', 'summaries per listing call, 1–1000', integerIn(1, 1000), 100)
    .addHelpText(
      'after',
      `
A file is written to a temp file and renamed into place: readers see the old file or the
whole new one. Ctrl-C stops between two sessions and leaves the file untouched.

Examples:
  $ sessionkit export backup.jsonl
  $ sessionkit export --folder ~/work/app > app.jsonl
  $ sessionkit export - --store file:./a | sessionkit import - --store postgres://app@db/app`,
    )
    .action((file: string | undefined, options: ExportOptions, command: Command) =>
      withStore(storeUrlOf(command), async ({ store, display }) => {
        runState.store = display;
        const toStdout = file === undefined || file === '-';
        const exported = await runLong(command, 'export', (progress) =>
          toStdout
            ? exportToStdout(store, options, progress)
            : exportSessions(store, file, {
                ...progress,
                folder: options.folder,
                pageSize: options.pageSize,
              }).then((r) => r.exported),
        );
        const summary = `exported ${exported} sessions from ${display}${toStdout ? '' : ` to ${file}`}\n`;
        if (toStdout) process.stderr.write(summary);
        else await writeOut(summary);
      }),
    );
}
