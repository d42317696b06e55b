// Runs a README's example as a test does: the first ```ts block under a heading, with what
// it prints captured, so each `console.log(…); // expected` comment becomes an assertion.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** What an example printed, next to what its comments say it prints. */
export interface ReadmeExampleRun {
  /** Each `console.log` call's arguments joined by spaces, in order. */
  printed: string[];
  /** The `// …` comment after each `console.log(…);` line, in order. */
  expected: string[];
}

/**
 * Runs the first ```ts block after the line `## heading` (or `### heading`) of the README
 * at `readme`, in a module written next to the README's `test/` folder (so vitest
 * transforms it and resolves its imports as the package's own tests do), then removes it.
 * `replace` maps literal text of the example to what the test needs instead (a test
 * server's URL, a package specifier the package cannot import by name). Throws when the
 * heading or its block is missing, or whatever the example throws.
 */
export async function runReadmeExample(
  readme: URL,
  heading: string,
  replace: Record<string, string> = {},
): Promise<ReadmeExampleRun> {
  const text = readFileSync(readme, 'utf8');
  const at = text.search(new RegExp(`^#{2,3} ${escapeRegExp(heading)}\\s*$`, 'm'));
  if (at < 0) throw new Error(`${readme.pathname}: no heading "${heading}"`);
  const start = text.indexOf('```ts\n', at);
  if (start < 0) throw new Error(`${readme.pathname}: no ts block under "${heading}"`);
  const end = text.indexOf('\n```', start + 6);
  let code = text.slice(start + 6, end + 1);
  const expected = [...code.matchAll(/console\.log\(.*\);\s*\/\/ (.*)$/gm)].map((m) =>
    m[1]!.trim(),
  );
  for (const [from, to] of Object.entries(replace)) code = code.split(from).join(to);
  const printed: string[] = [];
  const sink = `__readmeExample${randomBytes(4).toString('hex')}`;
  (globalThis as Record<string, unknown>)[sink] = (...args: unknown[]) =>
    printed.push(args.map((a) => (typeof a === 'string' ? a : format(a))).join(' '));
  code = code.replace(/\bconsole\.log\(/g, `globalThis.${sink}(`);
  const file = join(dirname(fileURLToPath(readme)), 'test', `.readme-example-${sink}.ts`);
  writeFileSync(file, code);
  try {
    await import(pathToFileURL(file).href);
  } finally {
    rmSync(file, { force: true });
    delete (globalThis as Record<string, unknown>)[sink];
  }
  return { printed, expected };
}

/** How console.log shows a value, for the few the examples print. */
function format(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((v) => (typeof v === 'string' ? `'${v}'` : format(v))).join(', ')}]`;
  return String(value);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\`]/g, '\\$&');
}
