import { isEventLog, isRuntimeStatusStore } from '@sessionkit/core';
import type { Command } from 'commander';
import { renderTranscript } from '../render/transcript.js';
import { storeUrlOf } from '../runtime/context.js';
import { withStore } from '../runtime/open.js';
import { useColor, writeJson, writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';
import { integerIn } from './parsers.js';
import { childrenOf } from './tree-walk.js';

interface ShowOptions {
  json?: boolean;
  last?: number;
}

/** `show <id>`: a transcript for people, or the whole record as JSON. */
export function registerShow(program: Command): void {
  program
    .command('show')
    .argument('<id>', 'the session id')
    .description('show a session: its transcript with roles, tool calls and branch points')
    .option('--last <n>', 'only the last n messages', integerIn(1))
    .option('--json', 'print {session, runtimeStatus, events} as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ sessionkit show 01JD8X3YB7Q0R0Z8W1V7T8K2QF
  $ sessionkit show 01JD8X3YB7Q0R0Z8W1V7T8K2QF --last 10
  $ sessionkit show 01JD8X3YB7Q0R0Z8W1V7T8K2QF --json | jq '.session.messages | length'`,
    )
    .action((id: string, options: ShowOptions, command: Command) =>
      withStore(storeUrlOf(command), async ({ store, display }) => {
        runState.store = display;
        const session = await store.load(id);
        if (options.json) {
          const runtimeStatus = isRuntimeStatusStore(store)
            ? await store.loadRuntimeStatus(id)
            : null;
          const events = isEventLog(store) ? await store.events(id) : [];
          await writeJson({ session, runtimeStatus, events });
          return;
        }
        const branches = await childrenOf(store, id);
        const offset =
          options.last === undefined ? 0 : Math.max(0, session.messages.length - options.last);
        await writeOut(renderTranscript(session, branches, useColor(), offset));
      }),
    );
}
