// Drives the built `sessionkit` binary in a child process, as an operator would.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built entry point (`pnpm build` first). */
export const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

/** What a finished run printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Environment additions; `SESSIONKIT_STORE_URL` is cleared unless given. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. */
  input?: string;
  cwd?: string;
  timeoutMs?: number;
  /** Other node flags or a different entry (the missing-adapter install). */
  nodeArgs?: string[];
  bin?: string;
}

function childEnv(extra: RunOptions['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SESSIONKIT_STORE_URL: '', NO_COLOR: '1' };
  // The test runner's package-manager NODE_PATH would let a bare install resolve packages
  // it does not have.
  delete env.NODE_PATH;
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Starts `sessionkit args…` and returns the child with its collected output. */
export function startCli(args: string[], options: RunOptions = {}) {
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), options.bin ?? BIN, ...args],
    { cwd: options.cwd, env: childEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const out = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out.stdout += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    out.stderr += d;
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  const done = new Promise<CliRun>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sessionkit ${args.join(' ')} timed out\n${out.stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ...out });
    });
  });
  return { child, out, done };
}

/** Runs `sessionkit args…` to the end. */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliRun> {
  return startCli(args, options).done;
}

/** The non-empty lines of `text`. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}
