// Creating sessions (session/create.ts): a damaged session is never overwritten, and what a
// killed create left behind never blocks the id.
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

describe('create after a create killed half way', () => {
  it('an empty folder (killed after its mkdir) is taken over, and made private', async () => {
    const s = fixture.open();
    await s.list(); // opens the store: its folders exist
    const folder = join(fixture.dir, 'sessions', 'y');
    mkdirSync(folder, { mode: 0o755 });
    chmodSync(folder, 0o755);
    const created = await s.create({ id: 'y', messages: [{ role: 'user', content: 'hi' }] });
    expect(created.revision).toBe(1);
    expect((await fixture.open().load('y')).messages).toEqual([{ role: 'user', content: 'hi' }]);
    if (process.platform !== 'win32') expect(statSync(folder).mode & 0o777).toBe(0o700);
  });

  it('a folder holding only a temp file is cleaned and taken over', async () => {
    const s = fixture.open();
    await s.list();
    const folder = join(fixture.dir, 'sessions', 'z');
    mkdirSync(folder, { mode: 0o700 });
    writeFileSync(join(folder, '.snap-1.skr.0123456789abcdef.tmp'), 'half a snapshot');
    await s.create({ id: 'z' });
    expect(readdirSync(folder).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect((await s.list()).map((x) => x.id)).toContain('z');
  });

  it('a folder holding a session is exists, whatever store creates it again', async () => {
    await fixture.open().create({ id: 'w' });
    expect(await codeOf(fixture.open().create({ id: 'w' }))).toBe('exists');
  });
});
