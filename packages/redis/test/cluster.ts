// A real Redis Cluster for tests: three masters on free loopback ports, each a child
// process of the test run with its files in a temporary folder. `stop()` kills them and
// removes the folder; an exit handler does the same if the run ends without calling it.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';

const run = promisify(execFile);
const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const REDIS_CLI = process.env.REDIS_CLI_BIN ?? 'redis-cli';
/**
 * How long a node may not answer the cluster bus before the others mark it failed:
 * Redis's own default. A node stays silent while it runs one command, and on a loaded CI
 * machine the conformance suite's 20 MB transcript kept one busy past the 2 s this was,
 * which took the whole cluster down (`CLUSTERDOWN`) for the tests that followed.
 */
const NODE_TIMEOUT_MS = '15000';

/** A free TCP port on 127.0.0.1 whose cluster bus port (+10000) is free too. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await listenOnce(0);
    if (port + 10000 < 65536 && (await isFree(port + 10000))) return port;
  }
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : port));
    });
  });
}

async function isFree(port: number): Promise<boolean> {
  try {
    await listenOnce(port);
    return true;
  } catch {
    return false;
  }
}

/** One redis-server child process. */
export interface ServerProcess {
  port: number;
  child: ChildProcess;
}

/** Starts `redis-server` with `args` on `port` (a child of this process) and waits for PING. */
export async function startServer(
  port: number,
  dir: string,
  args: string[] = [],
): Promise<ServerProcess> {
  const child = spawn(
    REDIS_SERVER,
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
      ...args,
    ],
    { stdio: 'ignore' },
  );
  await waitFor(async () => (await cli(port, 'ping')) === 'PONG', `redis-server on ${port}`);
  return { port, child };
}

/** Stops a server process and waits until it has exited. */
export async function stopServer(
  server: ServerProcess,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** Runs redis-cli against `port`; the trimmed output ('' when the server does not answer). */
export async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run(REDIS_CLI, ['-h', '127.0.0.1', '-p', String(port), ...args], {
      timeout: 10_000,
    });
    return stdout.trim();
  } catch {
    return '';
  }
}

async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A running test cluster. */
export interface TestCluster {
  ports: number[];
  servers: ServerProcess[];
  dir: string;
  /** A new Cluster client on it (the caller quits it). */
  client(): Cluster;
  /** Kills every node and removes the temporary folder. Idempotent. */
  stop(): Promise<void>;
  /** The arguments node `index` was started with (to restart it as it was). */
  argsOf(index: number): string[];
}

/** Starts three masters, creates the cluster and waits for `cluster_state:ok` on every node. */
export async function startCluster(masters = 3, extraArgs: string[] = []): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sk-redis-cluster-'));
  const servers: ServerProcess[] = [];
  const killAll = () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  let stopped = false;
  const cluster: TestCluster = {
    ports: [],
    servers,
    dir,
    client: () => {
      const c = new Cluster(
        cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
        { redisOptions: { maxRetriesPerRequest: 2 } },
      );
      c.on('error', () => {});
      return c;
    },
    argsOf: (index) => {
      const port = cluster.ports[index] as number;
      return [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        NODE_TIMEOUT_MS,
        ...extraArgs,
      ];
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const s of servers) await stopServer(s);
      process.removeListener('exit', killAll);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      cluster.ports.push(port);
      servers.push(
        await startServer(port, dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          NODE_TIMEOUT_MS,
          ...extraArgs,
        ]),
      );
    }
    await run(
      REDIS_CLI,
      ['--cluster', 'create', ...cluster.ports.map((p) => `127.0.0.1:${p}`), '--cluster-yes'],
      {
        timeout: 30_000,
      },
    );
    await waitForClusterOk(cluster.ports);
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

/** Waits until every node reports `cluster_state:ok`. */
export async function waitForClusterOk(ports: number[], timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      for (const port of ports) {
        if (!(await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
      }
      return true;
    },
    'cluster_state:ok',
    timeoutMs,
  );
}
