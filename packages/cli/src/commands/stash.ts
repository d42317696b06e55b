import { defaultStashPath, StashStore } from '@sessionkit/core';
import type { Command } from 'commander';
import { CliError, usageError } from '../runtime/cli-error.js';
import { oneLine, paint, shortDate, useColor, writeJson, writeOut } from '../runtime/output.js';
import { runState } from '../runtime/run-state.js';

/** The environment variable naming the stash file when `--file` is not given. */
export const STASH_FILE_ENV = 'SESSIONKIT_STASH_FILE';

function stashOf(command: Command): StashStore {
  const file =
    (command.optsWithGlobals() as { file?: string }).file ||
    process.env[STASH_FILE_ENV] ||
    defaultStashPath();
  runState.store = `stash ${file}`;
  return new StashStore(file);
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw usageError('give the text, or pipe it into stdin');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `stash`: draft prompts kept aside (core's StashStore: one JSON file, newest first). */
export function registerStash(program: Command): void {
  const stash = program
    .command('stash')
    .description('keep draft prompts aside: list, save, show, drop, pop')
    .option(
      '--file <path>',
      `the stash file (default: $${STASH_FILE_ENV} or ${defaultStashPath()})`,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ sessionkit stash save "Ask about the lexer's comment handling"
  $ git diff | sessionkit stash save
  $ sessionkit stash list
  $ sessionkit stash pop`,
    );

  stash
    .command('list', { isDefault: true })
    .description('list stashed drafts, newest first')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const entries = await stashOf(command).list();
      if (options.json) return writeJson(entries);
      const color = useColor();
      if (entries.length === 0) return writeOut('(the stash is empty)\n');
      const lines = entries.map(
        (e) => `${paint(color, 'cyan', e.id)}  ${shortDate(e.savedAt)}  ${oneLine(e.text, 70)}`,
      );
      return writeOut(`${lines.join('\n')}\n`);
    });

  stash
    .command('save')
    .argument('[text...]', 'the draft (read from stdin when absent)')
    .description('stash a draft and print its id')
    .action(async (words: string[], _options: object, command: Command) => {
      const text = words.length > 0 ? words.join(' ') : await readStdin();
      if (text.trim() === '') throw usageError('nothing to stash: the text is empty');
      await writeOut(`${await stashOf(command).save(text)}\n`);
    });

  stash
    .command('show')
    .argument('<id>', 'the draft id')
    .description('print a stashed draft')
    .action(async (id: string, _options: object, command: Command) => {
      await writeOut(`${await stashOf(command).get(id)}\n`);
    });

  stash
    .command('drop')
    .argument('<id>', 'the draft id')
    .description('delete a stashed draft')
    .action(async (id: string, _options: object, command: Command) => {
      const store = stashOf(command);
      await store.get(id); // not_found for an unknown id, instead of silently nothing
      await store.delete(id);
    });

  stash
    .command('pop')
    .description('print the newest draft and remove it from the stash')
    .action(async (_options: object, command: Command) => {
      const store = stashOf(command);
      const [newest] = await store.list();
      if (newest === undefined) throw new CliError('the stash is empty: nothing to pop');
      await writeOut(`${newest.text}\n`);
      await store.delete(newest.id);
    });
}
