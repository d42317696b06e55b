#!/usr/bin/env node
// No GitHub Actions runner exists where CI runs, so the workflows are checked here: each
// file against the published workflow schema (action-validator), and the conformance
// matrix they read against the packages that exist.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, '.github', 'workflows');
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
let failed = files.length === 0;
for (const file of files) {
  const r = spawnSync('pnpm', ['exec', 'action-validator', join(dir, file)], {
    cwd: root,
    encoding: 'utf8',
  });
  console.log(`${r.status === 0 ? 'valid' : 'INVALID'} .github/workflows/${file}`);
  if (r.status !== 0) {
    failed = true;
    console.error(r.stdout, r.stderr);
  }
}
const matrix = spawnSync(process.execPath, [join(root, 'scripts', 'matrix.mjs'), 'check'], {
  stdio: 'inherit',
});
if (matrix.status !== 0) failed = true;
process.exitCode = failed ? 1 : 0;
