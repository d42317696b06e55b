// Creating sessions (session/create.ts): a damaged session is never overwritten.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOf, storeFolderFixture } from './helpers.js';

const fixture = storeFolderFixture();

describe('create never destroys a damaged session', () => {
  it('a log without its snapshot makes create fail with corrupt and keeps the log', async () => {
    const s = fixture.open();
    await s.create({ id: 'x' });
    await s.commit('x', { append: [{ role: 'user', content: 'keep me' }] });
    const folder = join(fixture.dir, 'sessions', 'x');
    rmSync(join(folder, 'snap-1.skr'));
    expect(await codeOf(fixture.open().create({ id: 'x' }))).toBe('corrupt');
    expect(readdirSync(folder)).toContain('log-1.skr');
  });
});
