// `sessionkit serve` through the built binary: help, credentials that never reach a page,
// the token of a viewer on another host, a port in use, and the README's code example.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '@sessionkit/core';
import { openPostgresStore } from '@sessionkit/postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { runReadmeExample } from '../../../scripts/readme-example.js';
import { dropSchema, freshSchema, POSTGRES_URL, postgresAvailable } from './helpers/postgres.js';
import { runCli, startCli } from './helpers/run-cli.js';
import { seedStore } from './helpers/seed.js';
import { request, startServe } from './helpers/serve.js';

const available = postgresAvailable('the viewer credential test needs it');
const work = mkdtempSync(join(tmpdir(), 'sk-cli-serve-'));
const fileUrl = `file:${join(work, 'store')}`;
const schemas: string[] = [];

afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
  rmSync(work, { recursive: true, force: true });
});

describe('sessionkit serve', () => {
  it('is in the help, with its options and examples', async () => {
    const root = await runCli(['--help']);
    expect(root.stdout).toMatch(
      /\n {2}serve \[options\] +browse sessions in a read-only web viewer/,
    );
    const help = await runCli(['serve', '--help']);
    expect(help.code).toBe(0);
    for (const text of [
      '--port <n>',
      '--host <host>',
      '--require-token',
      '--remote-images',
      '$ sessionkit serve --host 0.0.0.0',
    ]) {
      expect(help.stdout).toContain(text);
    }
  });

  it.runIf(available)(
    'never shows the store URL’s credentials, in any answer or line printed',
    async () => {
      const schema = freshSchema();
      schemas.push(schema);
      const seeded = await openPostgresStore<Message>(POSTGRES_URL, { schema });
      const ids = await seedStore(seeded);
      await seeded.close();
      const url = new URL(POSTGRES_URL);
      url.searchParams.set('schema', schema);
      // Trust authentication ignores a password; a server that checks one gets its own.
      if (url.password === '') url.password = 'viewer-Secret-9f3';
      const secret = decodeURIComponent(url.password);
      const serve = await startServe(['--store', url.href]);
      try {
        const paths = [
          '/',
          '/?q=lexer',
          '/?folder=/work/app&archived=1',
          `/s/${ids.root}`,
          `/s/${ids.root}?offset=0&limit=2&part=messages`,
          `/s/${ids.root}/tree`,
          `/s/${ids.branch}/tree?part=tree`,
          `/s/${ids.root}/events`,
          `/s/${ids.root}/messages/1`,
          '/s/missing-session',
          '/s/missing-session/tree',
          '/?after=nonsense',
          '/assets/viewer.js',
        ];
        const answers = await Promise.all(paths.map((p) => request(new URL(p, serve.url).href)));
        answers.push(await request(serve.url, { method: 'POST' }));
        answers.push(await request(serve.url, { headers: { Host: 'rebound.example' } }));
        expect(answers.map((a) => a.status)).toEqual([
          200, 200, 200, 200, 200, 200, 200, 200, 200, 404, 404, 400, 200, 405, 403,
        ]);
        expect(answers[3]?.body).toContain(`postgres://${url.username}:***@`);
        for (const [i, a] of answers.entries()) {
          const everything = JSON.stringify(a.headers) + a.body;
          expect(everything.includes(secret), paths[i] ?? 'refusal').toBe(false);
        }
      } finally {
        const run = await serve.stop();
        expect(run.code).toBe(0);
        expect(run.stdout + run.stderr).not.toContain(secret);
        expect(run.stdout).toContain(`postgres://${url.username}:***@`);
      }
    },
  );

  it('on another host prints a token address and refuses requests without the token', async () => {
    const serve = await startServe(['--store', fileUrl, '--host', '0.0.0.0']);
    try {
      expect(serve.output().stdout).toMatch(/access token required \(listening on 0\.0\.0\.0/);
      const open = new URL(serve.openUrl);
      const token = open.searchParams.get('token') ?? '';
      expect(token).toMatch(/^[\w-]{32}$/);
      const local = `http://127.0.0.1:${open.port}/`;
      expect((await request(local)).status).toBe(401);
      const visit = await request(`${local}?token=${token}`);
      expect(visit.status).toBe(303);
      expect(String(visit.headers['set-cookie'])).toContain(token);
    } finally {
      expect((await serve.stop()).code).toBe(0);
    }
  });

  it('says so when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const run = await startCli(['--store', fileUrl, 'serve', '--port', String(port)]).done;
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `sessionkit serve: port ${port} on 127.0.0.1 is in use — pick another with --port N`,
      );
    } finally {
      blocker.close();
    }
  });

  it('runs the README example (the viewer from code)', async () => {
    const run = await runReadmeExample(
      new URL('../README.md', import.meta.url),
      'The viewer from code',
      {
        "from '@sessionkit/cli'": "from '../src/index.js'",
        "'./sessions'": JSON.stringify(join(work, 'readme-sessions')),
      },
    );
    expect(run.expected.length).toBeGreaterThan(0);
    expect(run.printed).toEqual(run.expected);
  });
});
