// The example as a user runs it: each step in a process of its own (a restart between
// steps) on the file store, then the sessionkit command listing the thread.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(new URL('../../../packages/cli/dist/bin.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sessionkit-langgraph-example-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const url = `file:${join(work, 'threads')}`;

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [file, ...args],
      {
        cwd: here,
        env: { ...process.env, SESSIONKIT_STORE_URL: url },
        timeout: 60_000,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${args.join(' ')} failed: ${stderr || error.message}`));
        else resolve(stdout);
      },
    );
  });
}

const step = async (...args: string[]) => JSON.parse(await run(join('src', 'main.js'), args));

describe('examples/langgraph', () => {
  it('survives restarts, branches from an earlier checkpoint, lists with sessionkit', async () => {
    expect(await step('ask', 'Where is order 1042?')).toEqual({
      answer: 'You have asked: Where is order 1042?',
      messages: 2,
    });
    expect(await step('ask', 'When will it arrive?')).toEqual({
      answer: 'You have asked: Where is order 1042? / When will it arrive?',
      messages: 4,
    });
    expect(await step('branch', 'Cancel it instead')).toEqual({
      answer: 'You have asked: Where is order 1042? / Cancel it instead',
      messages: 4,
    });
    const threads = await step('threads');
    expect(threads.map((t: { threadId: string }) => t.threadId)).toEqual(['support-1042']);

    const listed = JSON.parse(
      await run(cli, ['list', '--store', url, '--folder', 'langgraph', '--json']),
    ) as { sessions: { id: string; title: string; metadata: Record<string, string> }[] };
    expect(listed.sessions.map((s) => s.id)).toEqual([threads[0].sessionId]);
    expect(listed.sessions[0]!.title).toBe('support-1042');
    expect(listed.sessions[0]!.metadata['langgraph.thread_id']).toBe('support-1042');
  });
});
