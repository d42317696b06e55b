import { isRepairer } from '@sessionkit/core';
import type { Command } from 'commander';
import { runLong, storeUrlOf } from '../runtime/context.js';
import { withStore } from '../runtime/open.js';
import { writeJson, writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';

/** `repair`: rebuilds a store's derived index (file, S3) and reports unreadable sessions. */
export function registerRepair(program: Command): void {
  program
    .command('repair')
    .description("rebuild the store's index from its data and report unreadable sessions")
    .option('--json', 'print the repair report as JSON')
    .addHelpText(
      'after',
      `
Stores whose index cannot drift from their data (memory, PostgreSQL) have nothing to
repair; the command says so and exits 0. Exit 1 when sessions were skipped as corrupt.

Examples:
  $ sessionkit repair
  $ sessionkit repair --store file:./sessions --json`,
    )
    .action((options: { json?: boolean }, command: Command) =>
      withStore(storeUrlOf(command), async ({ store, display }) => {
        runState.store = display;
        if (!isRepairer(store)) {
          await writeOut(`${display} keeps no derived index: nothing to repair\n`);
          return;
        }
        // repair() reports no progress of its own: the view shows that it runs.
        const report = await runLong(command, 'repair', async (progress) => {
          progress.signal.throwIfAborted();
          progress.onProgress({ phase: 'repair', done: 0 });
          const r = await store.repair();
          progress.onProgress({ phase: 'repair', done: r.rebuilt });
          return r;
        });
        if (options.json) await writeJson(report);
        else {
          const lines = [
            `repaired ${display}: ${report.rebuilt} sessions rebuilt, ${report.indexEntriesFixed} index entries fixed, ${report.skippedCorrupt.length} unreadable`,
            ...report.skippedCorrupt.map((s) => `unreadable: ${s.id}: ${s.reason}`),
          ];
          await writeOut(`${lines.join('\n')}\n`);
        }
        if (report.skippedCorrupt.length > 0) process.exitCode = 1;
      }),
    );
}
