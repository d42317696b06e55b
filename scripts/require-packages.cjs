// A CommonJS consumer: `require()` of every published package and of every subpath it
// exports, as an application still on CommonJS does it. The packages are ESM-only, and
// Node loads ESM through require() from 20.19 (and 22.12): this proves they stay
// loadable that way (no top-level await, no ESM-only syntax at load time). Run it on the
// lowest supported Node. Builds must exist (pnpm build).
const {
  mkdtempSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');

const root = resolve(__dirname, '..');

/** Published packages: { name, dir, subpaths } from each package.json's exports. */
function publishedPackages() {
  const dirs = [
    ...readdirSync(join(root, 'packages')).map((d) => join(root, 'packages', d)),
    join(root, 'conformance'),
  ];
  const out = [];
  for (const dir of dirs) {
    let pkg;
    try {
      pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    if (pkg.private) continue;
    const subpaths = Object.keys(pkg.exports ?? { '.': null }).filter((s) => !s.endsWith('.json'));
    out.push({ name: pkg.name, dir, subpaths });
  }
  return out;
}

// The consumer's node_modules holds links to the packages, as an install would.
const consumer = mkdtempSync(join(tmpdir(), 'sessionkit-cjs-consumer-'));
const failures = [];
let loaded = 0;
try {
  const packages = publishedPackages();
  mkdirSync(join(consumer, 'node_modules', '@sessionkit'), { recursive: true });
  for (const p of packages) symlinkSync(p.dir, join(consumer, 'node_modules', p.name), 'dir');
  const requireFromConsumer = require('node:module').createRequire(join(consumer, 'index.js'));
  for (const p of packages) {
    // The conformance suite imports vitest, which is ESM with top-level await by design;
    // the suite is run through vitest or its CLI, never required by an application.
    if (p.name === '@sessionkit/conformance') continue;
    for (const subpath of p.subpaths) {
      const id = subpath === '.' ? p.name : `${p.name}/${subpath.slice(2)}`;
      try {
        const mod = requireFromConsumer(id);
        const names = Object.keys(mod);
        if (names.length === 0) throw new Error('loaded, but exports nothing');
        loaded += 1;
        console.log(`require('${id}'): ${names.length} exports`);
      } catch (e) {
        failures.push(`require('${id}'): ${e?.code ? `${e.code} ` : ''}${e?.message}`);
      }
    }
  }
} finally {
  rmSync(consumer, { recursive: true, force: true });
}
for (const f of failures) console.error(f);
if (failures.length > 0 || loaded === 0) process.exit(1);
console.log(`CommonJS consumer on Node ${process.versions.node}: ${loaded} entry points loaded`);
