// Creating sessions (session/create.ts): a damaged session is never overwritten.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { codeOf, tempDir } from './helpers.js';

let root: string;
let dir: string;
const stores: FileStore[] = [];
function open(options: Omit<ConstructorParameters<typeof FileStore>[0] & object, 'dir'> = {}) {
  const s = new FileStore({ dir, ...options });
  stores.push(s);
  return s;
}
beforeEach(() => {
  root = tempDir('sk-file-regress-');
  dir = join(root, 'store');
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  rmSync(root, { recursive: true, force: true });
});

describe('create never destroys a damaged session', () => {
  it('a log without its snapshot makes create fail with corrupt and keeps the log', async () => {
    const s = open();
    await s.create({ id: 'x' });
    await s.commit('x', { append: [{ role: 'user', content: 'keep me' }] });
    const folder = join(dir, 'sessions', 'x');
    rmSync(join(folder, 'snap-1.skr'));
    expect(await codeOf(open().create({ id: 'x' }))).toBe('corrupt');
    expect(readdirSync(folder)).toContain('log-1.skr');
  });
});
