// LangGraph's SqliteSaver for the bench, installed on first use with npm into
// node_modules/.cache/sessionkit-bench: its better-sqlite3 is a native module with no
// prebuilt binary reachable here, so it is no dependency of the workspace (a clean
// install and CI never compile it). better-sqlite3 is pinned to 12.x: 13 crashes on Node
// 20. The saver's LangGraph peers are not installed there (`--legacy-peer-deps`): Node
// resolves them upwards, to this package's own @langchain/langgraph-checkpoint, so the
// graph and the saver share one BaseCheckpointSaver.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The packages installed, pinned. */
export const SQLITE_SAVER = '@langchain/langgraph-checkpoint-sqlite@1.0.4';
export const BETTER_SQLITE3 = 'better-sqlite3@12.11.1';
const cache = fileURLToPath(new URL('../node_modules/.cache/sessionkit-bench/', import.meta.url));

/** LangGraph's `SqliteSaver` class, installing it first if needed; throws why it cannot. */
export async function loadSqliteSaver() {
  const root = join(cache, 'node_modules', '@langchain', 'langgraph-checkpoint-sqlite');
  if (!existsSync(join(cache, 'node_modules', 'better-sqlite3', 'build')) || !existsSync(root)) {
    mkdirSync(cache, { recursive: true });
    const r = spawnSync(
      'npm',
      [
        'install',
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--legacy-peer-deps',
        '--prefix',
        cache,
        SQLITE_SAVER,
        BETTER_SQLITE3,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 10 * 60_000 },
    );
    if (r.status !== 0) {
      throw new Error(
        `npm install ${SQLITE_SAVER} ${BETTER_SQLITE3} failed: ${r.stderr.trim().split('\n').pop()}`,
      );
    }
  }
  const entry = join(root, 'dist', 'index.js');
  const { SqliteSaver } = await import(pathToFileURL(entry).href);
  return SqliteSaver;
}
