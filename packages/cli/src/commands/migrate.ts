import type { Command } from 'commander';
import { type MigrateResult, migrateSessions } from '../migrate/copy.js';
import { type VerifyResult, verifyMigration } from '../migrate/verify.js';
import { CliError, isAbortError, usageError } from '../runtime/cli-error.js';
import { runLong } from '../runtime/context.js';
import { EXIT } from '../runtime/exit-codes.js';
import { type OpenedStore, openCliStore } from '../runtime/open.js';
import { writeJson, writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { integerIn } from './parsers.js';

interface MigrateCommandOptions {
  from: string;
  to: string;
  folder?: string;
  pageSize: number;
  concurrency: number;
  verifyOnly?: boolean;
  json?: boolean;
}

/** Opens both stores (closing the first if the second fails) and runs `work`. */
async function withBoth<T>(
  from: string,
  to: string,
  work: (source: OpenedStore, target: OpenedStore) => Promise<T>,
): Promise<T> {
  const source = await openCliStore(from);
  try {
    const target = await openCliStore(to);
    try {
      return await work(source, target);
    } finally {
      await target.store.close().catch(() => undefined);
    }
  } finally {
    await source.store.close().catch(() => undefined);
  }
}

function summaryLines(
  copy: MigrateResult | undefined,
  verify: VerifyResult,
  from: string,
  to: string,
): string[] {
  const lines: string[] = [];
  if (copy) {
    lines.push(
      `copied ${copy.copied} sessions from ${from} to ${to}` +
        (copy.resumed > 0 ? `, ${copy.resumed} already there from an earlier run` : '') +
        (copy.vanished > 0 ? `, ${copy.vanished} deleted from the source meanwhile` : ''),
    );
  }
  lines.push(
    `source: ${verify.sourceCount} sessions, ${verify.messages} messages, ${verify.events} events, digest sha256:${verify.sourceDigest}`,
    `target: ${verify.targetCount} sessions, digest sha256:${verify.targetDigest}`,
  );
  if (verify.ok) lines.push('verified: the target equals the source');
  for (const m of verify.mismatches) lines.push(`differs: ${m.id}: ${m.reason}`);
  if (verify.mismatchCount > verify.mismatches.length) {
    lines.push(`… and ${verify.mismatchCount - verify.mismatches.length} more`);
  }
  return lines;
}

async function runMigrate(options: MigrateCommandOptions, command: Command): Promise<void> {
  if (options.from === options.to) throw usageError('--from and --to name the same store');
  await withBoth(options.from, options.to, async (source, target) => {
    runState.store = `${source.display} → ${target.display}`;
    let copied = 0;
    let total = 0;
    const scope = {
      folder: options.folder,
      pageSize: options.pageSize,
      concurrency: options.concurrency,
    };
    const outcome = await runLong(command, 'migrate', async (progress) => {
      const onProgress: typeof progress.onProgress = (p) => {
        if (p.phase === 'copy') {
          copied = p.done;
          total = p.total ?? total;
        }
        progress.onProgress(p);
      };
      const opts = { ...scope, signal: progress.signal, onProgress };
      const copy = options.verifyOnly
        ? undefined
        : await migrateSessions(source.store, target.store, opts);
      const verify = await verifyMigration(source.store, target.store, opts);
      return { copy, verify };
    }).catch((e: unknown) => {
      if (!isAbortError(e)) throw e;
      throw new CliError(
        `interrupted after ${copied} of ${total} sessions; the target is consistent — run the same command again to resume`,
        EXIT.interrupted,
      );
    });
    const { copy, verify } = outcome;
    if (options.json) await writeJson({ from: source.display, to: target.display, copy, verify });
    else
      await writeOut(`${summaryLines(copy, verify, source.display, target.display).join('\n')}\n`);
    if (!verify.ok) {
      throw new CliError(
        `verification failed: ${verify.mismatchCount} sessions differ, ${verify.sourceCount} in the source and ${verify.targetCount} in the target — run migrate again to resume, or inspect the sessions listed above with sessionkit show`,
        EXIT.mismatch,
      );
    }
  });
}

/** `migrate --from URL --to URL`: a streamed, resumable, verified copy between stores. */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('copy every session from one store to another, then verify the copy')
    .requiredOption('--from <url>', 'the source store URL')
    .requiredOption('--to <url>', 'the target store URL')
    .option('--folder <folder>', 'only sessions of this workspace folder')
    .option('--page-size <n>', 'summaries per listing call, 1–1000', integerIn(1, 1000), 200)
    .option('--concurrency <n>', 'sessions copied and compared at once, 1–64', integerIn(1, 64), 8)
    .option('--verify-only', 'copy nothing: only compare the target with the source')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Keeps ids, created/updated/archived dates, branch trees, counters, metadata, state,
runtime status and events (re-appended in order). Streams: memory stays flat however
many sessions there are. Ctrl-C stops at a safe point (every copied session complete);
running the same command again finishes the job without duplicates. At the end it compares both stores (counts,
per-session message counts, a content digest) and exits with 3 if they differ.

Examples:
  $ sessionkit migrate --from file:./sessions --to postgres://app@db:5432/app
  $ sessionkit migrate --from file:./sessions --to "postgres://app@db/app?schema=agents"
  $ sessionkit migrate --from postgres://app@db/app --to file:./backup --folder ~/work/app
  $ sessionkit migrate --from file:./sessions --to postgres://app@db/app --verify-only`,
    )
    .action((options: MigrateCommandOptions, command: Command) => runMigrate(options, command));
}
