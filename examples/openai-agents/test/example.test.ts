// The example as a user runs it, offline: each turn in a process of its own (a restart
// between turns), on the file store and on PostgreSQL by URL.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAvailable } from '../../../packages/postgres/test/env.js';

const here = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sessionkit-openai-agents-example-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Turn {
  answer: string;
  items: number;
  modelInput: { type?: string; role?: string; content?: unknown }[];
}

/** One turn in its own process (test/turn.js), with the scripted model of that turn. */
function turn(storeUrl: string, name: 'first' | 'followUp', question: string): Promise<Turn> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join('test', 'turn.js')],
      {
        cwd: here,
        env: {
          ...process.env,
          OPENAI_AGENTS_DISABLE_TRACING: '1',
          SESSIONKIT_STORE_URL: storeUrl,
          SESSION_ID: 'order-support',
          TURN: name,
          QUESTION: question,
        },
        timeout: 60_000,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`turn ${name} failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as Turn);
      },
    );
  });
}

/** Both turns on `storeUrl`, each in a new process: the second sees the first once. */
async function conversationSurvivesRestart(storeUrl: string): Promise<void> {
  const first = await turn(storeUrl, 'first', 'Where is order 1042?');
  expect(first.answer).toBe('Order 1042 has shipped.');
  expect(first.items).toBe(4); // question, tool call, tool result, answer

  const second = await turn(storeUrl, 'followUp', 'When will it arrive?');
  expect(second.answer).toBe('It arrives Thursday, with DHL.');
  expect(second.items).toBe(6);
  expect(second.modelInput.map((item) => item.type)).toEqual([
    'message',
    'function_call',
    'function_call_result',
    'message',
    'message',
  ]);
  expect(second.modelInput.at(-1)).toMatchObject({ role: 'user', content: 'When will it arrive?' });
}

describe('examples/openai-agents', () => {
  it('file store: the conversation survives a restart', async () => {
    await conversationSurvivesRestart(`file:${join(work, 'sessions')}`);
  });

  it('PostgreSQL by URL: the same code, the same conversation', async (ctx) => {
    if (!postgresAvailable('the openai-agents example on PostgreSQL is skipped')) ctx.skip();
    const schema = `sk_example_oa_${process.pid}_${Date.now()}`;
    try {
      await conversationSurvivesRestart(`${POSTGRES_URL}?schema=${schema}`);
    } finally {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
