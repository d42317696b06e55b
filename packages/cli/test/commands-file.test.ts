// Every command against the file store, through the built binary.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '@sessionkit/file';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, runCli } from './helpers/run-cli.js';
import { type Seeded, seedMany, seedStore } from './helpers/seed.js';

const work = mkdtempSync(join(tmpdir(), 'sk-cli-file-'));
const dir = join(work, 'store');
const url = `file:${dir}`;
let ids: Seeded;

beforeAll(async () => {
  const store = new FileStore({ dir, sync: false });
  ids = await seedStore(store);
  await store.close();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const sk = (args: string[], input?: string) => runCli(['--store', url, ...args], { input });

describe('sessionkit on a file store', () => {
  it('list shows summaries newest first, filters, and pages with a cursor', async () => {
    const all = await sk(['list', '--archived']);
    expect(all.code, all.stderr).toBe(0);
    const rows = lines(all.stdout).slice(1);
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => r.split(/\s+/)[0])).toContain(ids.archived);

    const unarchived = await sk(['list', '--json']);
    const parsed = JSON.parse(unarchived.stdout) as {
      sessions: { id: string }[];
      nextCursor: string | null;
    };
    expect(parsed.sessions.map((s) => s.id)).not.toContain(ids.archived);
    expect(parsed.nextCursor).toBeNull();

    const folder = JSON.parse((await sk(['list', '--folder', '/work/app', '--json'])).stdout);
    expect(folder.sessions.map((s: { id: string }) => s.id).sort()).toEqual(
      [ids.root, ids.branch, ids.subBranch].sort(),
    );

    const page1 = JSON.parse((await sk(['list', '--archived', '--limit', '2', '--json'])).stdout);
    expect(page1.sessions).toHaveLength(2);
    expect(page1.nextCursor).toMatch(/^\d{4}-.*Z\/.+$/);
    const page2 = JSON.parse(
      (await sk(['list', '--archived', '--limit', '2', '--cursor', page1.nextCursor, '--json']))
        .stdout,
    );
    const seen = [...page1.sessions, ...page2.sessions].map((s: { id: string }) => s.id);
    expect(new Set(seen).size).toBe(4);
    const everything = JSON.parse(
      (await sk(['list', '--archived', '--limit', '2', '--all', '--json'])).stdout,
    );
    expect(everything.sessions).toHaveLength(5);
    expect(everything.nextCursor).toBeNull();
  });

  it('search finds a session by message text, not by tool arguments', async () => {
    const hit = JSON.parse((await sk(['search', 'lexer skips', '--json'])).stdout);
    expect(hit.sessions.map((s: { id: string }) => s.id)).toEqual([ids.root]);
    const none = await sk(['search', 'lexer.ts']);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('(no sessions match)');
  });

  it('show renders roles, tool calls and branch points, and --json gives the whole record', async () => {
    const text = await sk(['show', ids.root]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Parser bug');
    expect(text.stdout).toMatch(/#1 user/);
    expect(text.stdout).toMatch(/#3 tool \(read_file, answers c1\)/);
    expect(text.stdout).toContain('→ read_file({"path":"lexer.ts","b":1,"a":2})');
    expect(text.stdout).toContain(`⎇ branch ${ids.branch}`);
    // The branch marker sits after message 2, where the branch left the transcript.
    expect(text.stdout.indexOf(`⎇ branch ${ids.branch}`)).toBeLessThan(
      text.stdout.indexOf('#3 tool'),
    );
    const last = await sk(['show', ids.root, '--last', '1']);
    expect(last.stdout).toContain('3 earlier messages');
    expect(last.stdout).not.toContain('#1 user');

    const json = JSON.parse((await sk(['show', ids.root, '--json'])).stdout);
    expect(json.session.messages).toHaveLength(4);
    expect(json.runtimeStatus).toEqual({ tests: 'passed', z: 1, a: [1, 2] });
    expect(json.events.map((e: { type: string }) => e.type)).toEqual(['tool.run', 'tool.run']);
  });

  it('tree shows the branch tree from the root and marks the session', async () => {
    const r = await sk(['tree', ids.subBranch]);
    expect(r.code, r.stderr).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]).toMatch(/^root-1 /);
    expect(out[1]).toContain(`└─ ${ids.branch}`);
    expect(out[1]).toContain('at message 2');
    expect(out[2]).toContain(`└─ ${ids.subBranch}`);
    expect(out[2]).toContain('◀');
    const json = JSON.parse((await sk(['tree', ids.root, '--json'])).stdout);
    expect(json.children[0].id).toBe(ids.branch);
    expect(json.children[0].children[0].id).toBe(ids.subBranch);
  });

  it('export to a file and to stdout, import from a file and from stdin (resumable with skip)', async () => {
    const file = join(work, 'backup.jsonl');
    const toFile = await sk(['export', file]);
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(toFile.stdout).toContain('exported 5 sessions');
    const fileLines = lines(readFileSync(file, 'utf8'));
    expect(JSON.parse(fileLines[0]!).format).toBe('sessionkit-export');
    expect(fileLines).toHaveLength(6);

    const toStdout = await sk(['export', '-']);
    expect(toStdout.code, toStdout.stderr).toBe(0);
    const stdoutLines = lines(toStdout.stdout);
    expect(stdoutLines).toHaveLength(6);
    // The same records as core's file export (the header's time differs).
    expect(stdoutLines.slice(1)).toEqual(fileLines.slice(1));

    const target = `file:${join(work, 'imported')}`;
    const half = [fileLines[0], ...fileLines.slice(1, 3)].join('\n');
    writeFileSync(join(work, 'half.jsonl'), `${half}\n`);
    const first = await runCli(['--store', target, 'import', join(work, 'half.jsonl')]);
    expect(first.stdout).toContain('imported 2 sessions');
    const again = await runCli(['--store', target, 'import', file]);
    expect(again.code).toBe(1);
    expect(lines(again.stderr)).toHaveLength(1);
    expect(again.stderr).toMatch(/^sessionkit import: .*exists/);
    const resumed = await runCli(['--store', target, 'import', '-', '--on-existing', 'skip'], {
      input: toStdout.stdout,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('imported 3 sessions');
    expect(resumed.stdout).toContain('skipped 2 already there');
    const verify = await runCli(['migrate', '--from', url, '--to', target, '--verify-only']);
    // Import re-appends events, so they compare by sequence, type and payload: equal.
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('repair rebuilds the index and reports', async () => {
    const r = await sk(['repair', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.skippedCorrupt).toEqual([]);
    expect(report.rebuilt).toBe(5);
  });

  it('prune --dry-run counts, prune deletes the oldest roots', async () => {
    const pdir = `file:${join(work, 'prune')}`;
    const store = new FileStore({ dir: join(work, 'prune'), sync: false });
    await seedMany(store, 12);
    await store.close();
    const dry = await runCli(['--store', pdir, 'prune', '--max', '5', '--dry-run']);
    expect(dry.stdout).toContain('would delete 7 root sessions');
    const real = await runCli(['--store', pdir, 'prune', '--max', '5']);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toContain('deleted 7 root sessions');
    const left = JSON.parse((await runCli(['--store', pdir, 'list', '--json'])).stdout);
    expect(left.sessions.map((s: { id: string }) => s.id)).toEqual([
      's-00011',
      's-00010',
      's-00009',
      's-00008',
      's-00007',
    ]);
  });

  it('stash saves, lists, shows, pops and drops drafts', async () => {
    const file = join(work, 'stash.json');
    const st = (args: string[], input?: string) =>
      runCli(['stash', '--file', file, ...args], { input });
    const a = (await st(['save', 'first', 'draft'])).stdout.trim();
    const b = (await st(['save'], 'second draft from stdin\n')).stdout.trim();
    expect(a).not.toBe(b);
    const list = await st(['list', '--json']);
    expect(JSON.parse(list.stdout).map((e: { text: string }) => e.text)).toEqual([
      'second draft from stdin\n',
      'first draft',
    ]);
    expect((await st(['show', a])).stdout).toBe('first draft\n');
    expect((await st(['pop'])).stdout).toBe('second draft from stdin\n\n');
    await st(['drop', a]);
    expect((await st([])).stdout).toContain('(the stash is empty)');
    const missing = await st(['show', a]);
    expect(missing.code).toBe(1);
    expect(lines(missing.stderr)).toHaveLength(1);
    const empty = await st(['pop']);
    expect(empty.code).toBe(1);
  });

  it('doctor reports reachability, format version, counts and capabilities', async () => {
    const r = await sk(['doctor', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.reachable).toBe(true);
    expect(report.adapter).toMatch(/^@sessionkit\/file/);
    expect(report.format).toMatch(/sessionkit-file version \d+ on disk/);
    expect(report.counts).toEqual({ sessions: 5, roots: 3, branches: 2, archived: 1, messages: 9 });
    expect(report.capabilities).toContain('EventLog');
    const text = await sk(['doctor', '--no-count']);
    expect(text.stdout).toMatch(/^reachable\s+yes/m);
    expect(text.stdout).not.toMatch(/^sessions/m);
  });

  it('uses $SESSIONKIT_STORE_URL when --store is absent', async () => {
    const r = await runCli(['list', '--archived', '--json'], {
      env: { SESSIONKIT_STORE_URL: url },
    });
    expect(JSON.parse(r.stdout).sessions).toHaveLength(5);
  });

  it('uses the file store at its default location without --store or the variable', async () => {
    const home = join(work, 'home');
    const r = await runCli(['doctor', '--json'], {
      env: { XDG_DATA_HOME: join(home, 'data'), HOME: home },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).store).toBe(
      `file://${join(home, 'data', 'sessionkit', 'sessions')}`,
    );
  });
});
