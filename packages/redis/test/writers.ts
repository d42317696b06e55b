// Writer processes for the kill tests (`fixtures/writer.mjs`): the store's source compiled
// to a private folder per test file (never the package's dist), and a child process whose
// output lines are collected.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** Compiles the source into `node_modules/.cache/<folder>`; returns the entry for writers. */
export function buildWriterEntry(folder: string): string {
  const outDir = join('node_modules', '.cache', folder);
  execFileSync(
    process.execPath,
    [
      join('node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      outDir,
    ],
    { cwd: packageDir },
  );
  return `../../${outDir}/index.js`;
}

/** A running writer process. */
export interface Writer {
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves once a printed line matches `pattern`; rejects if the writer exits first. */
  waitFor(pattern: RegExp): Promise<void>;
  /** Resolves once the process has exited. */
  exited: Promise<unknown>;
}

/** Starts `fixtures/writer.mjs` with `args` (connection, prefix, entry, plan, name). */
export function startWriter(args: string[]): Writer {
  const child = spawn(process.execPath, ['test/fixtures/writer.mjs', ...args], {
    cwd: packageDir,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    output: () => out,
    exited,
    waitFor: (pattern) =>
      new Promise<void>((resolve, reject) => {
        const check = setInterval(() => {
          if (pattern.test(out)) {
            clearInterval(check);
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearInterval(check);
            reject(new Error(`the writer exited early (${child.exitCode ?? child.signalCode})`));
          }
        }, 10);
      }),
  };
}
