import { createRequire } from 'node:module';
import { Command, Option } from 'commander';
import { registerConformance } from './commands/conformance.js';
import { registerDoctor } from './commands/doctor.js';
import { registerExport } from './commands/export.js';
import { registerImport } from './commands/import.js';
import { registerList } from './commands/list.js';
import { registerMigrate } from './commands/migrate.js';
import { integerIn } from './commands/parsers.js';
import { registerPrune } from './commands/prune.js';
import { registerRepair } from './commands/repair.js';
import { registerServe } from './commands/serve.js';
import { registerShow } from './commands/show.js';
import { registerStash } from './commands/stash.js';
import { registerTree } from './commands/tree.js';
import { runState } from './runtime/run-state.js';
import { STORE_URL_ENV } from './runtime/store-url.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const ROOT_HELP = `
The store: --store URL, else $${STORE_URL_ENV}, else the file store at its default
location (~/.local/share/sessionkit/sessions on Linux). URLs: file:./sessions,
postgres://user@host:5432/db?schema=name, redis://…, s3://bucket/prefix, memory:.
Credentials in URLs are never printed.

Exit codes:
  0    done
  1    the operation failed (store unreachable, adapter not installed, data corrupt …)
  2    usage error (unknown command or option, bad value, malformed store URL)
  3    migrate: the target differs from the source after the copy
  130  interrupted by Ctrl-C at a safe point (run the same command again to resume)

Examples:
  $ sessionkit list
  $ sessionkit show 01JD8X3YB7Q0R0Z8W1V7T8K2QF
  $ sessionkit migrate --from file:./sessions --to postgres://app@db:5432/app
  $ sessionkit doctor --store postgres://app@db:5432/app
  $ sessionkit serve --store postgres://app@db:5432/app
  $ sessionkit <command> --help`;

/** The full name of a (sub)command, e.g. `stash pop`, for error lines. */
function fullName(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * The `sessionkit` command line (commander). Parsing errors throw a `CommanderError`
 * (exitOverride) so `main` decides the exit code; messages go to stderr as one line.
 */
export function buildProgram(): Command {
  const program = new Command('sessionkit')
    .description(
      'Inspect, search, export, import, migrate, maintain and browse sessionkit sessions on any store.',
    )
    .version(version, '-V, --version')
    .option(
      '--store <url>',
      `the store (default: $${STORE_URL_ENV} or the file store's default folder)`,
    )
    .option('-q, --quiet', 'no progress output')
    .addOption(
      new Option(
        '--progress <mode>',
        'progress display: auto (a bar on a terminal, lines otherwise), bar, lines, off',
      )
        .choices(['auto', 'bar', 'lines', 'off'])
        .default('auto'),
    )
    .option('--progress-interval <ms>', 'milliseconds between progress lines', integerIn(0), 2000)
    .option('--debug', 'print stack traces with errors')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      outputError: (text, write) =>
        write(
          `sessionkit: ${text
            .replace(/^error: /, '')
            .replace(/\s*\n\s*/g, ' ')
            .trim()} (see --help)\n`,
        ),
    })
    .addHelpText('after', ROOT_HELP);
  program.hook('preAction', (_root, action) => {
    runState.command = fullName(action);
  });
  registerList(program);
  registerShow(program);
  registerTree(program);
  registerExport(program);
  registerImport(program);
  registerMigrate(program);
  registerRepair(program);
  registerPrune(program);
  registerStash(program);
  registerDoctor(program);
  registerServe(program);
  registerConformance(program);
  return program;
}
