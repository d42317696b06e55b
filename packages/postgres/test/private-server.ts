// A private PostgreSQL instance for tests that must stop or reconfigure a server: initdb
// in a temp folder, a free loopback port, run as the `postgres` user when this process is
// root. The shared server is never touched.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IN_CI } from './env.js';

const run = promisify(execFile);
const BIN = process.env.SESSIONKIT_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Whether initdb and pg_ctl are here. Under CI their absence throws instead of skipping. */
export function privateServersAvailable(): boolean {
  const ok = existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'pg_ctl'));
  if (!ok) {
    const message = `[sessionkit/postgres tests] no initdb/pg_ctl in ${BIN} (set SESSIONKIT_PG_BIN): these tests need a private PostgreSQL instance`;
    if (IN_CI) throw new Error(`${message} (CI=true: failing instead of skipping)`);
    console.warn(`\n!!! SKIPPED: ${message}\n`);
  }
  return ok;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL binary, as the `postgres` user when this process is root. */
async function pgBin(name: string, args: string[]): Promise<string> {
  const cmd = join(BIN, name);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  const { stdout } = await run(file, argv, { timeout: 60_000 });
  return stdout;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A private instance: `init()` creates and starts it, `destroy()` stops and removes it. */
export class PrivateServer {
  #dir = '';
  #data = '';
  #port = 0;
  #started = false;

  /** `postgres://<user>@127.0.0.1:<port>/postgres`. */
  url(user = 'postgres'): string {
    return `postgres://${user}@127.0.0.1:${this.#port}/postgres`;
  }

  async init(): Promise<void> {
    this.#dir = await mkdtemp(join(tmpdir(), 'sessionkit-pg-'));
    if (asRoot) {
      const { stdout: uid } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(this.#dir, Number(uid.trim()), Number(gid.trim()));
    }
    this.#data = join(this.#dir, 'data');
    this.#port = await freePort();
    await pgBin('initdb', [
      '-D',
      this.#data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    await this.start();
  }

  async start(): Promise<void> {
    await pgBin('pg_ctl', [
      '-D',
      this.#data,
      '-l',
      join(this.#dir, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-k ${this.#dir} -c listen_addresses=127.0.0.1 -p ${this.#port} -c fsync=off`,
      'start',
    ]);
    this.#started = true;
  }

  async stop(mode: 'fast' | 'immediate'): Promise<void> {
    await pgBin('pg_ctl', ['-D', this.#data, '-m', mode, '-w', '-t', '60', 'stop']);
    this.#started = false;
  }

  /** Stops the server if it runs and removes its folder; never throws. */
  async destroy(): Promise<void> {
    if (this.#started) await this.stop('immediate').catch(() => {});
    if (this.#dir) await rm(this.#dir, { recursive: true, force: true });
  }
}
