// The example runs as a user runs it (`node src/main.js`, its own process) and prints the
// spans and metrics its comments promise, and nothing the conversation says.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sessionkit-otel-example-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runExample(): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join('src', 'main.js')],
      {
        cwd: here,
        env: { ...process.env, SESSIONKIT_EXAMPLE_DIR: join(work, 'sessions') },
        timeout: 60_000,
        encoding: 'utf8',
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

/** The objects the console exporters printed: each starts with `{` and ends with `}` alone on a line. */
function printedObjects(out: string): string[] {
  return out
    .split(/^\{$/m)
    .slice(1)
    .map((block) => `{${block}`);
}

/** One printed span: its name, id, parent span id and the attribute lines as printed. */
function spanOf(block: string) {
  const one = (re: RegExp) => re.exec(block)?.[1];
  return {
    name: one(/^ {2}name: '([^']+)'/m),
    id: one(/^ {2}id: '([0-9a-f]+)'/m),
    parent: one(/parentSpanContext: \{[^}]*spanId: '([0-9a-f]+)'/),
    status: one(/^ {2}status: (\{[^}]*\})/m),
    block,
  };
}

describe('examples/otel', () => {
  it('prints every store call as a span, nested under the app’s turn, then the metrics', async () => {
    const { code, out, err } = await runExample();
    expect(code, err).toBe(0);
    const objects = printedObjects(out);
    const spans = objects.filter((o) => /^ {2}traceId:/m.test(o)).map(spanOf);
    expect(spans.map((s) => s.name)).toEqual([
      'sessionkit.create',
      'sessionkit.commit',
      'sessionkit.loadMessages',
      'chat turn',
      'sessionkit.commit',
      'sessionkit.list',
      'sessionkit.close',
    ]);
    const [create, commit, window, turn, refused] = spans;
    expect(create!.block).toContain("'sessionkit.store.kind': 'file'");
    expect(commit!.parent).toBe(turn!.id);
    expect(window!.parent).toBe(turn!.id);
    expect(commit!.block).toContain("'sessionkit.messages.written': 2");
    expect(commit!.block).toMatch(/'sessionkit\.request\.bytes': \d+/);
    expect(window!.block).toContain("'sessionkit.messages.read': 2");
    expect(refused!.block).toContain("'error.type': 'conflict'");
    expect(refused!.status).toBe("{ code: 2, message: 'conflict' }");
    expect(refused!.block).toContain("'exception.message': 'conflict'");

    const metrics = objects.filter((o) => /^ {2}descriptor:/m.test(o));
    const metric = (name: string) => metrics.find((m) => m.includes(`name: '${name}'`));
    expect(metric('sessionkit.operation.duration')).toContain("type: 'HISTOGRAM'");
    expect(metric('sessionkit.operation.conflicts')).toMatch(/value: 1\n/);
    expect(metric('sessionkit.messages.written')).toMatch(/value: 2\n/);

    // What the conversation says, its title and its folder are printed nowhere.
    for (const text of ['parser drop comments', 'lexer skips', "'Comments'", '/work/parser'])
      expect(out).not.toContain(text);
  });
});
