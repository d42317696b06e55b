// An installation of the command with only its own dependencies (core, file, memory,
// commander): no PostgreSQL adapter, no conformance suite. Real copies, not workspace
// links, so nothing resolves back into the workspace's node_modules.
import { cpSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cliRoot = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(join(cliRoot, 'package.json'));

function copyPackage(from: string, to: string, parts: string[]): void {
  mkdirSync(to, { recursive: true });
  for (const part of parts) cpSync(join(from, part), join(to, part), { recursive: true });
}

/** A temp folder with `node_modules` holding the command and its runtime dependencies. */
export function isolatedInstall(): { root: string; bin: string } {
  const root = mkdtempSync(join(tmpdir(), 'sk-cli-install-'));
  const modules = join(root, 'node_modules');
  copyPackage(cliRoot, join(modules, '@sessionkit', 'cli'), ['package.json', 'dist']);
  for (const name of ['core', 'file', 'memory']) {
    const dir = realpathSync(dirname(require.resolve(`@sessionkit/${name}/package.json`)));
    copyPackage(dir, join(modules, '@sessionkit', name), ['package.json', 'dist']);
  }
  const commander = realpathSync(join(cliRoot, 'node_modules', 'commander'));
  cpSync(commander, join(modules, 'commander'), { recursive: true });
  return { root, bin: join(modules, '@sessionkit', 'cli', 'dist', 'bin.js') };
}
