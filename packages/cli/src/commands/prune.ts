import { enforceMax, listRows, type Store } from '@sessionkit/core';
import type { Command } from 'commander';
import { runLong, storeUrlOf } from '../runtime/context.js';
import { withStore } from '../runtime/open.js';
import { writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { integerIn } from './parsers.js';

/** How many root sessions `enforceMax(max)` would delete: roots after the newest `max`. */
async function countPrunable(
  store: Store,
  max: number,
  onScan: (done: number) => void,
): Promise<number> {
  let roots = 0;
  let scanned = 0;
  for await (const row of listRows(store, { pageSize: 1000, where: 'prune --dry-run' })) {
    if (!row.parentId) roots++;
    scanned++;
    if (scanned % 1000 === 0) onScan(scanned);
  }
  onScan(scanned);
  return max <= 0 ? 0 : Math.max(0, roots - max);
}

/** `prune --max N`: keeps the newest N root sessions, deletes the other roots. */
export function registerPrune(program: Command): void {
  program
    .command('prune')
    .description('keep the newest N root sessions and delete the others (branches are promoted)')
    .requiredOption('--max <n>', 'root sessions to keep; 0 means unlimited', integerIn(0))
    .option('--dry-run', 'only count what would be deleted')
    .addHelpText(
      'after',
      `
Roots are ordered by last update (archived ones count). Sub-sessions are never selected;
deleting a root promotes its branches. Ctrl-C stops between two deletions; a later run
finishes the job.

Examples:
  $ sessionkit prune --max 500 --dry-run
  $ sessionkit prune --max 500 --store postgres://app@db/app`,
    )
    .action((options: { max: number; dryRun?: boolean }, command: Command) =>
      withStore(storeUrlOf(command), async ({ store, display }) => {
        runState.store = display;
        if (options.dryRun) {
          const n = await runLong(command, 'prune', (p) =>
            countPrunable(store, options.max, (done) => p.onProgress({ phase: 'scan', done })),
          );
          await writeOut(
            `would delete ${n} root sessions from ${display} (keeping the newest ${options.max})\n`,
          );
          return;
        }
        const deleted = await runLong(command, 'prune', (progress) =>
          enforceMax(store, options.max, progress),
        );
        await writeOut(
          `deleted ${deleted} root sessions from ${display}${options.max > 0 ? ` (kept the newest ${options.max})` : ' (--max 0: unlimited)'}\n`,
        );
      }),
    );
}
