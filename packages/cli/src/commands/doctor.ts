import { detectCapabilities } from '@sessionkit/core';
import type { Command } from 'commander';
import { runLong, storeUrlOf } from '../runtime/context.js';
import { openCliStore } from '../runtime/open.js';
import { writeJson, writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { countStore, formatVersionOf, type StoreCounts } from './doctor-probes.js';

/** What doctor found, as `--json` prints it. */
interface DoctorReport {
  store: string;
  adapter: string;
  reachable: boolean;
  openMs: number;
  listMs: number;
  format: string;
  capabilities: string[];
  counts?: StoreCounts;
}

function renderReport(r: DoctorReport): string {
  const rows: [string, string][] = [
    ['store', r.store],
    ['adapter', r.adapter],
    ['reachable', `yes (opened in ${r.openMs} ms, first page listed in ${r.listMs} ms)`],
    ['format', r.format],
  ];
  if (r.counts) {
    const c = r.counts;
    rows.push([
      'sessions',
      `${c.sessions} (${c.roots} roots, ${c.branches} branches, ${c.archived} archived), ${c.messages} messages`,
    ]);
  }
  rows.push(['capabilities', r.capabilities.join(', ')]);
  return `${rows.map(([k, v]) => `${k.padEnd(13)} ${v}`).join('\n')}\n`;
}

/** `doctor`: can the store be reached, its format version, counts and capabilities. */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check a store: reachable, format or schema version, counts, capabilities')
    .option('--no-count', 'skip counting sessions (a pass over the whole listing)')
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      `
Exit 0 when the store answers; 1 (with the reason on one line) when it cannot be reached.

Examples:
  $ sessionkit doctor
  $ sessionkit doctor --store postgres://app@db:5432/app --json
  $ SESSIONKIT_STORE_URL=file:./sessions sessionkit doctor --no-count`,
    )
    .action(async (options: { count: boolean; json?: boolean }, command: Command) => {
      const url = storeUrlOf(command);
      const t0 = Date.now();
      const opened = await openCliStore(url);
      runState.store = opened.display;
      try {
        const openMs = Date.now() - t0;
        const t1 = Date.now();
        await opened.store.list({ limit: 1, includeArchived: true });
        const report: DoctorReport = {
          store: opened.display,
          adapter: opened.adapter
            ? `${opened.adapter.pkg}${opened.adapter.version ? ` ${opened.adapter.version}` : ''}`
            : 'registered adapter',
          reachable: true,
          openMs,
          listMs: Date.now() - t1,
          format: await formatVersionOf(opened),
          capabilities: detectCapabilities(opened.store),
        };
        if (options.count) {
          report.counts = await runLong(command, 'doctor', (p) =>
            countStore(opened.store, p.signal, (done) => p.onProgress({ phase: 'scan', done })),
          );
        }
        await (options.json ? writeJson(report) : writeOut(renderReport(report)));
      } finally {
        await opened.store.close().catch(() => undefined);
      }
    });
}
