#!/usr/bin/env node
// Every published package must carry what npm and its users need to find the source and
// the licence, and must publish with provenance. `--write` fills the fields in from the
// repository's coordinates; without it the script only checks and exits 1 on a gap, so a
// new package cannot be released without them.
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPOSITORY = 'https://github.com/sessionkit/sessionkit';
const SUPPORTED_NODE = '^20.19.0 || ^22.12.0 || >=24.0.0';
const root = fileURLToPath(new URL('..', import.meta.url));
const write = process.argv.includes('--write');

/** Workspace package folders, from pnpm-workspace.yaml's globs (`dir` or `dir/*`). */
function workspaceDirs() {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const section = yaml.split(/^catalog:/m)[0];
  const globs = [...section.matchAll(/^\s+-\s+(\S+)\s*$/gm)].map((m) => m[1]);
  const dirs = [];
  for (const glob of globs) {
    if (!glob.endsWith('/*')) dirs.push(glob);
    else {
      const parent = glob.slice(0, -2);
      for (const entry of readdirSync(join(root, parent))) dirs.push(`${parent}/${entry}`);
    }
  }
  return dirs.filter((dir) => existsSync(join(root, dir, 'package.json')));
}

/** The fields a published package must have, for the package in `dir`. */
function expectedFields(dir) {
  return {
    repository: { type: 'git', url: `git+${REPOSITORY}.git`, directory: dir },
    homepage: `${REPOSITORY}/tree/main/${dir}#readme`,
    bugs: { url: `${REPOSITORY}/issues` },
    publishConfig: { access: 'public', provenance: true },
    // What .ci/run tests: 20.19+ (require() of ESM), 22.12+ and 24 (scripts/other-runtimes.mjs).
    engines: { node: SUPPORTED_NODE },
  };
}

const license = readFileSync(join(root, 'LICENSE'), 'utf8');
const problems = [];
for (const dir of workspaceDirs()) {
  const file = join(root, dir, 'package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  if (pkg.private) continue;
  const expected = expectedFields(dir);
  let changed = false;
  for (const [key, value] of Object.entries(expected)) {
    if (JSON.stringify(pkg[key]) === JSON.stringify(value)) continue;
    if (write) {
      pkg[key] = value;
      changed = true;
    } else problems.push(`${pkg.name}: "${key}" should be ${JSON.stringify(value)}`);
  }
  if (pkg.license !== 'MIT') problems.push(`${pkg.name}: "license" should be "MIT"`);
  const licenseFile = join(root, dir, 'LICENSE');
  if (!existsSync(licenseFile) || readFileSync(licenseFile, 'utf8') !== license) {
    if (write) copyFileSync(join(root, 'LICENSE'), licenseFile);
    else problems.push(`${pkg.name}: ${dir}/LICENSE missing or not the root LICENSE`);
  }
  if (changed) writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
}
if (problems.length > 0) {
  console.error(`release metadata: ${problems.length} problem(s)`);
  for (const p of problems) console.error(`  ${p}`);
  console.error('run `node scripts/release-metadata.mjs --write` to fix them');
  process.exit(1);
}
console.log(write ? 'release metadata written' : 'release metadata: every published package ok');
