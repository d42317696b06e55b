import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError } from '../runtime/cli-error.js';
import { runState } from '../runtime/run-state.js';

const SUITE = '@sessionkit/conformance';

/** The path of the suite's CLI (`sessionkit-conformance`), from here or the working directory. */
export function conformanceBin(): string {
  for (const base of [import.meta.url, join(process.cwd(), 'package.json')]) {
    let manifestPath: string;
    try {
      manifestPath = createRequire(base).resolve(`${SUITE}/package.json`);
    } catch {
      continue;
    }
    const manifest = createRequire(base)(manifestPath) as { bin?: string | Record<string, string> };
    const bin =
      typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.['sessionkit-conformance'];
    if (bin) return resolve(dirname(manifestPath), bin);
  }
  throw new CliError(
    `the conformance suite is not installed — run: npm install -D ${SUITE} vitest`,
  );
}

/** Runs the suite's CLI with `args`, sharing this terminal, and resolves with its exit code. */
function runSuite(args: string[]): Promise<number> {
  const bin = conformanceBin();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: 'inherit' });
    // Ctrl-C reaches the child through the terminal; this process only waits for it.
    const ignore = () => {};
    process.on('SIGINT', ignore);
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', ignore);
      done(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}

/** `conformance <module>`: the adapter conformance suite's CLI, run from here. */
export function registerConformance(program: Command): void {
  program
    .command('conformance')
    .argument('<module>', 'a module exporting a conformance initializer (JavaScript or TypeScript)')
    .argument(
      '[options...]',
      'passed to sessionkit-conformance (--report, --spec, --export, --seed, --runs)',
    )
    .description(
      'run the sessionkit conformance suite on an adapter (needs @sessionkit/conformance and vitest)',
    )
    // Unknown options and everything after them are handed on as they are.
    .allowUnknownOption()
    .addHelpText(
      'after',
      `
Options after <module> go to sessionkit-conformance unchanged:
  --report <file>   also write the JSON report there
  --spec <names>    only these specs (e.g. store,brancher)
  --export <name>   the export holding the initializer
  --seed <n>, --runs <n>   replay / size the model-based spec

Exit code: the suite's — 0 when every implemented capability passed, 1 when a test
failed, 2 for bad usage.

Examples:
  $ sessionkit conformance ./test/initializer.ts
  $ sessionkit conformance ./dist/initializer.js --spec store,brancher --report report.json`,
    )
    .action(async (module: string, options: string[]) => {
      runState.store = undefined;
      process.exitCode = await runSuite([module, ...options]);
    });
}
