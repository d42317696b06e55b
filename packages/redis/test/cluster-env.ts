// Whether the Cluster tests can run: they start their own servers, so they need the
// redis-server and redis-cli binaries (Redis 7), not a running server.
import { execFileSync } from 'node:child_process';
import { IN_CI } from './env.js';

function missingBinary(): string | undefined {
  for (const bin of [
    process.env.REDIS_SERVER_BIN ?? 'redis-server',
    process.env.REDIS_CLI_BIN ?? 'redis-cli',
  ]) {
    try {
      execFileSync(bin, ['--version'], { stdio: 'ignore' });
    } catch {
      return bin;
    }
  }
  return undefined;
}

const missing = missingBinary();

/** True when the binaries are there; under CI a missing one fails the file instead. */
export function clusterAvailable(what: string): boolean {
  if (missing === undefined) return true;
  const message = `[sessionkit/redis tests] "${missing}" is not installed; ${what}. Install Redis 7 (e.g. "apt-get install redis-server") or set REDIS_SERVER_BIN / REDIS_CLI_BIN.`;
  if (IN_CI) throw new Error(`${message} (CI=true: failing instead of skipping)`);
  console.warn(`\n!!! SKIPPED: ${message}\n`);
  return false;
}
