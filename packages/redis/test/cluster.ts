// A real Redis Cluster for tests: three masters (and, when asked, replicas of each) on free
// loopback ports, each a child process of the test run with its files in a temporary folder. `stop()` kills them and
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

/** How `startCluster` builds the cluster beyond its masters. */
export interface ClusterShape {
  /** Replicas of each master (`redis-cli --cluster create --cluster-replicas`). Default 0. */
  replicas?: number;
  /**
   * `cluster-node-timeout` (ms): how long a master may be silent before its replica takes
   * over. Default Redis's 15,000 (see NODE_TIMEOUT_MS); failover tests set it small.
   */
  nodeTimeoutMs?: number;
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

/**
 * Starts `masters` masters (and `shape.replicas` replicas of each), creates the cluster and
 * waits for `cluster_state:ok` on every node and every replica's link to its master.
 */
export async function startCluster(
  masters = 3,
  extraArgs: string[] = [],
  shape: ClusterShape = {},
): Promise<TestCluster> {
  const replicas = shape.replicas ?? 0;
  const nodeTimeout = String(shape.nodeTimeoutMs ?? NODE_TIMEOUT_MS);
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
        nodeTimeout,
        // A replica's full sync starts at once, not after Redis's default 5 s pause.
        ...(replicas > 0 ? ['--repl-diskless-sync-delay', '0'] : []),
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
    for (let i = 0; i < masters * (1 + replicas); i++) {
      cluster.ports.push(await freePort());
      servers.push(await startServer(cluster.ports[i] as number, dir, cluster.argsOf(i)));
    }
    const create = ['--cluster', 'create', ...cluster.ports.map((p) => `127.0.0.1:${p}`)];
    if (replicas > 0) create.push('--cluster-replicas', String(replicas));
    await run(REDIS_CLI, [...create, '--cluster-yes'], { timeout: 30_000 });
    await waitForClusterOk(cluster.ports);
    await waitForReplicas(cluster.ports, masters * replicas);
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

/** Waits until `count` of the nodes are replicas whose link to their master is up. */
export async function waitForReplicas(
  ports: number[],
  count: number,
  timeoutMs = 30_000,
): Promise<void> {
  if (count === 0) return;
  await waitFor(
    async () => {
      let linked = 0;
      for (const port of ports) {
        const info = await cli(port, 'info', 'replication');
        if (info.includes('role:slave') && info.includes('master_link_status:up')) linked++;
      }
      return linked >= count;
    },
    `${count} replicas in sync`,
    timeoutMs,
  );
}

/** The port of the master that serves `key`'s slot, asked of the node on `port`. */
export async function masterOfKey(port: number, key: string): Promise<number> {
  const slot = Number(await cli(port, 'cluster', 'keyslot', key));
  for (const line of (await cli(port, 'cluster', 'nodes')).split('\n')) {
    // <id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot ranges…>
    const fields = line.split(' ');
    if (!fields[2]?.includes('master') || fields[2].includes('fail')) continue;
    for (const range of fields.slice(8)) {
      const [from, to = from] = range.split('-').map(Number);
      if (slot >= (from as number) && slot <= (to as number)) {
        return Number(fields[1]?.split('@')[0]?.split(':')[1]);
      }
    }
  }
  throw new Error(`no master serves the slot of ${key}`);
}

/** The port of a replica of the master on `masterPort` among `ports` (linked or not). */
export async function replicaOf(ports: number[], masterPort: number): Promise<number> {
  for (const port of ports) {
    const info = await cli(port, 'info', 'replication');
    if (info.includes('role:slave') && info.includes(`master_port:${masterPort}`)) return port;
  }
  throw new Error(`the master on ${masterPort} has no replica`);
}

/** Waits until the node on `port` reports `role:master`. */
export async function waitForMaster(port: number, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => (await cli(port, 'info', 'replication')).includes('role:master'),
    `the node on ${port} to become master`,
    timeoutMs,
  );
}
