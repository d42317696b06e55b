import type { ListOptions, SessionSummary, Store } from '@sessionkit/core';
import type { Command } from 'commander';
import { storeUrlOf } from '../runtime/context.js';
import { withStore } from '../runtime/open.js';
import { oneLine, paint, shortDate, useColor, writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { type Cursor, formatCursor, integerIn, isoDate, parseCursor } from './parsers.js';

/** Options of `list` and `search`. */
interface ListCommandOptions {
  folder?: string;
  status?: string;
  parent?: string;
  after?: Date;
  archived?: boolean;
  oldestFirst?: boolean;
  limit: number;
  cursor?: Cursor;
  all?: boolean;
  json?: boolean;
}

function addListOptions(command: Command): Command {
  return command
    .option('--folder <folder>', 'only sessions of this workspace folder')
    .option('--status <status>', 'only sessions with this status')
    .option('--parent <id>', 'only the direct branches of this session')
    .option('--after <date>', 'only sessions updated after this ISO date', isoDate)
    .option('--archived', 'include archived sessions')
    .option('--oldest-first', 'oldest first (default: most recently updated first)')
    .option('--limit <n>', 'sessions per page, 1–1000', integerIn(1, 1000), 50)
    .option(
      '--cursor <cursor>',
      'continue after this cursor (printed at the end of a page)',
      parseCursor,
    )
    .option('--all', 'every page, not only the first')
    .option('--json', 'print JSON: {"sessions": […], "nextCursor": …}');
}

/** `list` and `search`: summaries with filters and keyset paging. */
export function registerList(program: Command): void {
  addListOptions(program.command('list').alias('ls'))
    .description('list sessions (summaries: never reads message bodies)')
    .addHelpText(
      'after',
      `
Examples:
  $ sessionkit list
  $ sessionkit list --folder ~/work/app --limit 20
  $ sessionkit list --cursor 2026-11-29T13:23:35.671Z/01JD8X3YB7Q0R0Z8W1V7T8K2QF
  $ sessionkit list --all --json > sessions.json
  $ sessionkit list --store postgres://app@db/app --status active --archived`,
    )
    .action((options: ListCommandOptions, command: Command) => runList(command, options));

  addListOptions(program.command('search').argument('<query>', 'text to find'))
    .description('find sessions whose title or one message contains the text (case-insensitive)')
    .addHelpText(
      'after',
      `
Examples:
  $ sessionkit search "parser bug"
  $ sessionkit search lexer --folder ~/work/app --json`,
    )
    .action((query: string, options: ListCommandOptions, command: Command) =>
      runList(command, options, query),
    );
}

function listQuery(options: ListCommandOptions, query: string | undefined): ListOptions {
  const q: ListOptions = { limit: options.limit };
  if (options.folder !== undefined) q.folder = options.folder;
  if (options.status !== undefined) q.status = options.status;
  if (options.parent !== undefined) q.parentId = options.parent;
  if (options.after !== undefined) q.after = options.after;
  if (options.archived) q.includeArchived = true;
  if (options.oldestFirst) q.oldestFirst = true;
  if (query !== undefined) q.query = query;
  return q;
}

/** Pages of the listing from `start`: one page, or all of them with `all`. */
async function* pages(
  store: Store,
  base: ListOptions,
  start: Cursor | undefined,
  all: boolean,
): AsyncGenerator<{ page: SessionSummary[]; next: Cursor | undefined }> {
  let cursor = start;
  for (;;) {
    const page = await store.list(cursor === undefined ? base : { ...base, startAfter: cursor });
    const last = page[page.length - 1];
    const next = last !== undefined && page.length === base.limit ? last : undefined;
    yield { page, next: next && { updatedAt: next.updatedAt, id: next.id } };
    if (!all || next === undefined) return;
    cursor = { updatedAt: next.updatedAt, id: next.id };
  }
}

async function runList(command: Command, options: ListCommandOptions, query?: string) {
  const url = storeUrlOf(command);
  await withStore(url, async ({ store, display }) => {
    runState.store = display;
    const base = listQuery(options, query);
    const color = useColor();
    let count = 0;
    let next: Cursor | undefined;
    if (options.json) await writeOut('{"sessions":[');
    else await writeOut(`${paint(color, 'bold', header())}\n`);
    for await (const chunk of pages(store, base, options.cursor, options.all === true)) {
      for (const s of chunk.page) {
        if (options.json) await writeOut(`${count > 0 ? ',' : ''}\n  ${JSON.stringify(s)}`);
        else await writeOut(`${row(s, color)}\n`);
        count++;
      }
      next = chunk.next;
    }
    const cursorText = next === undefined ? null : formatCursor(next);
    if (options.json) {
      await writeOut(`${count > 0 ? '\n' : ''}],"nextCursor":${JSON.stringify(cursorText)}}\n`);
      return;
    }
    if (count === 0) await writeOut(`(no sessions${query !== undefined ? ' match' : ''})\n`);
    if (cursorText !== null) {
      await writeOut(
        paint(color, 'dim', `more: sessionkit ${command.name()} … --cursor ${cursorText}\n`),
      );
    }
  });
}

function header(): string {
  return `${'ID'.padEnd(26)}  ${'UPDATED (UTC)'.padEnd(16)}  ${'MSGS'.padStart(6)}  TITLE`;
}

function row(s: SessionSummary, color: boolean): string {
  const marks = [
    s.parentId ? paint(color, 'magenta', `↳ ${s.parentId}`) : '',
    s.archivedAt ? paint(color, 'yellow', '(archived)') : '',
    s.folder ? paint(color, 'dim', s.folder) : '',
  ].filter((m) => m !== '');
  const title = s.title === '' ? paint(color, 'dim', '(untitled)') : oneLine(s.title, 60);
  return `${paint(color, 'cyan', s.id.padEnd(26))}  ${shortDate(s.updatedAt)}  ${String(s.messageCount).padStart(6)}  ${title}${marks.length ? `  ${marks.join('  ')}` : ''}`;
}
