// The pieces under the commands: progress views, redaction, canonical digests.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/migrate/digest.js';
import { createProgressView, progressMode } from '../src/runtime/progress.js';
import { redactText } from '../src/runtime/redact.js';

function capture(isTTY: boolean) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  stream.isTTY = isTTY;
  stream.columns = 120;
  let text = '';
  stream.on('data', (d: Buffer) => {
    text += d.toString('utf8');
  });
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

describe('progress', () => {
  it('picks a bar on a terminal, lines elsewhere, nothing with --quiet', () => {
    expect(progressMode('auto', false, { isTTY: true } as NodeJS.WriteStream)).toBe('bar');
    expect(progressMode('auto', false, { isTTY: false } as NodeJS.WriteStream)).toBe('lines');
    expect(progressMode('bar', true, { isTTY: true } as NodeJS.WriteStream)).toBe('off');
    expect(progressMode('lines', false, { isTTY: true } as NodeJS.WriteStream)).toBe('lines');
  });

  it('prints plain lines with counts, rate and ETA, and a final line per phase', async () => {
    const out = capture(false);
    const view = await createProgressView('migrate', 'lines', 0, out.stream);
    view.report({ phase: 'copy', done: 1, total: 4 });
    view.report({ phase: 'copy', done: 2, total: 4 });
    view.report({ phase: 'verify', done: 4, total: 4 });
    view.finish(false);
    const printed = out.text().trim().split('\n');
    expect(printed[0]).toMatch(/^migrate: copy 1\/4 \(25\.0%\) [\d.]+\/s ETA \S+$/);
    expect(printed).toContainEqual(
      expect.stringMatching(/^migrate: copy 2\/4 \(50\.0%\) .* done in \d+s$/),
    );
    expect(printed[printed.length - 1]).toMatch(/^migrate: verify 4\/4 \(100\.0%\) [\d.]+\/s ETA/);
  });

  it('spaces lines by the interval and prints nothing for a phase shorter than it', async () => {
    const out = capture(false);
    const view = await createProgressView('export', 'lines', 60_000, out.stream);
    for (let i = 1; i <= 100; i++) view.report({ phase: 'export', done: i });
    view.finish();
    expect(out.text()).toBe('');
  });

  it('draws a bar with counts, rate and ETA on a terminal', async () => {
    const out = capture(true);
    const view = await createProgressView('import', 'bar', 0, out.stream);
    view.report({ phase: 'import', done: 5, total: 10 });
    view.finish();
    expect(out.text()).toMatch(/import import \[[^\]]+\] 5\/10 50% \| \d+\/s \| ETA/);
  });
});

describe('redactText', () => {
  it('removes passwords and secret parameters from every URL in a message', () => {
    expect(redactText('cannot reach postgres://bob:pw@h:5432/db: refused')).toBe(
      'cannot reach postgres://bob:***@h:5432/db: refused',
    );
    expect(redactText('x s3://b/p?secret_access_key=abc. y')).toBe(
      'x s3://b/p?secret_access_key=*** y',
    );
    expect(redactText('a redis://:tok@h/0, b postgres://u@h/db')).toBe(
      'a redis://:***@h/0, b postgres://u@h/db',
    );
  });
});

describe('canonicalJson', () => {
  it('sorts object keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,1]},"b":1}',
    );
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
    expect(canonicalJson(new Date('2026-01-01T00:00:00.000Z'))).toBe('"2026-01-01T00:00:00.000Z"');
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });
});
