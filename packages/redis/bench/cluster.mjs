// A throwaway three-master Redis Cluster for the benchmark (same steps as test/cluster.ts).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

function listenOnce(port) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: p } = server.address();
      server.close(() => resolve(p));
    });
  });
}

async function freePort() {
  for (;;) {
    const port = await listenOnce(0);
    if (
      port + 10000 < 65536 &&
      (await listenOnce(port + 10000).then(
        () => true,
        () => false,
      ))
    )
      return port;
  }
}

async function cli(port, ...args) {
  try {
    return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout.trim();
  } catch {
    return '';
  }
}

async function until(check, what) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Starts the cluster; returns { ports, stop() }. */
export async function startCluster() {
  const dir = mkdtempSync(join(tmpdir(), 'sk-redis-bench-'));
  const children = [];
  const ports = [];
  const stop = () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      ports.push(port);
      children.push(
        spawn(
          'redis-server',
          [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--dir',
            dir,
            '--save',
            '',
            '--appendonly',
            'no',
            '--daemonize',
            'no',
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
          ],
          { stdio: 'ignore' },
        ),
      );
      await until(async () => (await cli(port, 'ping')) === 'PONG', `redis-server ${port}`);
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-yes',
    ]);
    await until(async () => {
      for (const p of ports)
        if (!(await cli(p, 'cluster', 'info')).includes('cluster_state:ok')) return false;
      return true;
    }, 'cluster_state:ok');
  } catch (e) {
    stop();
    throw e;
  }
  return { ports, stop };
}
