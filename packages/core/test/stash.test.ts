import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isSessionKitError } from '../src/errors.js';
import { defaultStashPath, StashStore } from '../src/helpers/stash.js';
import { isValidId } from '../src/ids.js';
import { removeDistSnapshot, runChild, snapshotDist } from './fixtures/children.js';

const posixModes = process.platform !== 'win32';

let dir: string;
let path: string;
beforeAll(snapshotDist);
afterAll(removeDistSnapshot);
beforeEach(async () => {
  dir = await fsp.mkdtemp(join(tmpdir(), 'sk-stash-'));
  path = join(dir, 'nested', 'stash.json');
});
afterEach(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return isSessionKitError(e) ? e.code : `raw:${String(e)}`;
  }
  return 'resolved';
};

describe('StashStore', () => {
  it('saves, lists newest first, gets and deletes', async () => {
    const stash = await StashStore.open(path);
    const a = await stash.save('first draft');
    const b = await stash.save('second draft');
    const c = await stash.save('third ✍️ draft\nwith lines');
    for (const id of [a, b, c]) expect(isValidId(id)).toBe(true);
    expect(new Set([a, b, c]).size).toBe(3);

    const list = await stash.list();
    expect(list.map((e) => e.id)).toEqual([c, b, a]);
    expect(list.map((e) => e.text)).toEqual([
      'third ✍️ draft\nwith lines',
      'second draft',
      'first draft',
    ]);
    for (const e of list) expect(e.savedAt).toBeInstanceOf(Date);
    expect(list[0]!.savedAt.getTime()).toBeGreaterThanOrEqual(list[2]!.savedAt.getTime());

    expect(await stash.get(b)).toBe('second draft');
    await stash.delete(b);
    expect((await stash.list()).map((e) => e.id)).toEqual([c, a]);
    expect(await codeOf(stash.get(b))).toBe('not_found');
    // Deleting again, or an id that never existed, is not an error.
    await stash.delete(b);
    await stash.delete('never-saved');
    expect((await stash.list()).map((e) => e.id)).toEqual([c, a]);
  });

  it('persists across instances and keeps empty and unicode texts', async () => {
    const one = new StashStore(path);
    const id1 = await one.save('');
    const id2 = await one.save('日本語 \u{1F600} "quotes" \\ back');
    const two = new StashStore(path);
    expect(await two.get(id1)).toBe('');
    expect(await two.get(id2)).toBe('日本語 \u{1F600} "quotes" \\ back');
  });

  it('is empty before anything is saved and creates no file for reads or deletes', async () => {
    const stash = new StashStore(path);
    expect(await stash.list()).toEqual([]);
    expect(await codeOf(stash.get('x'))).toBe('not_found');
    await stash.delete('x');
    await expect(fsp.stat(join(dir, 'nested'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it.runIf(posixModes)('creates the file 0600 in a 0700 folder', async () => {
    const stash = await StashStore.open(path);
    expect((await fsp.stat(join(dir, 'nested'))).mode & 0o777).toBe(0o700);
    await stash.save('secret plan');
    expect((await fsp.stat(path)).mode & 0o777).toBe(0o600);
    // No lock or temp files are left behind.
    expect(await fsp.readdir(join(dir, 'nested'))).toEqual(['stash.json']);
  });

  it.runIf(posixModes)('the constructor creates the folder lazily on the first save', async () => {
    const stash = new StashStore(path);
    await expect(fsp.stat(join(dir, 'nested'))).rejects.toMatchObject({ code: 'ENOENT' });
    await stash.save('x');
    expect((await fsp.stat(join(dir, 'nested'))).mode & 0o777).toBe(0o700);
  });

  it.runIf(posixModes)('leaves an existing 0755 folder at 0755', async () => {
    const proj = join(dir, 'proj');
    await fsp.mkdir(proj);
    await fsp.chmod(proj, 0o755);
    const stash = new StashStore(join(proj, 'stash.json'));
    await stash.save('x');
    expect((await fsp.stat(proj)).mode & 0o777).toBe(0o755);
    expect((await fsp.stat(join(proj, 'stash.json'))).mode & 0o777).toBe(0o600);
    await StashStore.open(join(proj, 'stash.json'));
    expect((await fsp.stat(proj)).mode & 0o777).toBe(0o755);
  });

  it('writes a versioned JSON file', async () => {
    const stash = await StashStore.open(path);
    const id = await stash.save('hello');
    const file = JSON.parse(await fsp.readFile(path, 'utf8'));
    expect(file).toEqual({
      version: 1,
      entries: [{ id, text: 'hello', savedAt: expect.any(String) }],
    });
  });

  it('reports a corrupt file as corrupt and leaves it untouched', async () => {
    await fsp.mkdir(join(dir, 'nested'));
    const cases = [
      '{"version":1,"entries":[{"id":"a","text":"x"',
      '"just a string"',
      '{"version":1,"entries":{}}',
      '{"version":1,"entries":[{"id":"a","text":5,"savedAt":"2024-01-01T00:00:00Z"}]}',
      '{"version":1,"entries":[{"id":"a","text":"x","savedAt":"not a date"}]}',
      '{"version":1,"entries":[null]}',
      '{"entries":[]}',
      '{"version":99,"entries":[]}',
    ];
    for (const bad of cases) {
      await fsp.writeFile(path, bad);
      const stash = new StashStore(path);
      expect(await codeOf(stash.list()), bad).toBe('corrupt');
      expect(await codeOf(stash.get('a')), bad).toBe('corrupt');
      expect(await codeOf(stash.save('new')), bad).toBe('corrupt');
      expect(await codeOf(stash.delete('a')), bad).toBe('corrupt');
      expect(await fsp.readFile(path, 'utf8')).toBe(bad);
    }
    await fsp.writeFile(path, '{"version":99,"entries":[]}');
    const e = await new StashStore(path).list().catch((x: unknown) => x);
    expect((e as Error).message).toContain(path);
    expect((e as Error).message).toContain('newer');
  });

  it('reads the older bare-array format and upgrades it on the next change', async () => {
    await fsp.mkdir(join(dir, 'nested'));
    await fsp.writeFile(
      path,
      JSON.stringify([
        { id: 'new', text: 'newer', saved_at: '2024-02-01T00:00:00Z' },
        { id: 'old', text: 'older', saved_at: '2024-01-01T00:00:00Z' },
      ]),
    );
    const stash = new StashStore(path);
    expect((await stash.list()).map((e) => [e.id, e.text, e.savedAt.toISOString()])).toEqual([
      ['new', 'newer', '2024-02-01T00:00:00.000Z'],
      ['old', 'older', '2024-01-01T00:00:00.000Z'],
    ]);
    const id = await stash.save('newest');
    expect((await stash.list()).map((e) => e.id)).toEqual([id, 'new', 'old']);
    expect(JSON.parse(await fsp.readFile(path, 'utf8')).version).toBe(1);
  });

  it('orders by savedAt even when the file order is not', async () => {
    await fsp.mkdir(join(dir, 'nested'));
    await fsp.writeFile(
      path,
      JSON.stringify({
        version: 1,
        entries: [
          { id: 'a', text: 'a', savedAt: '2024-01-01T00:00:00Z' },
          { id: 'b', text: 'b', savedAt: '2024-03-01T00:00:00Z' },
          { id: 'c', text: 'c', savedAt: '2024-02-01T00:00:00Z' },
        ],
      }),
    );
    expect((await new StashStore(path).list()).map((e) => e.id)).toEqual(['b', 'c', 'a']);
  });

  it('rejects bad arguments with invalid_argument', async () => {
    const stash = new StashStore(path);
    expect(await codeOf(stash.save(42 as unknown as string))).toBe('invalid_argument');
    expect(await codeOf(stash.get(''))).toBe('invalid_argument');
    expect(await codeOf(stash.delete(undefined as unknown as string))).toBe('invalid_argument');
    expect(() => new StashStore('')).toThrow(/path/);
  });

  it('wraps file system failures as unavailable', async () => {
    await fsp.mkdir(path, { recursive: true }); // the stash path is a folder
    const stash = new StashStore(path);
    expect(await codeOf(stash.list())).toBe('unavailable');
    expect(await codeOf(stash.save('x'))).toBe('unavailable');
  });

  it('loses nothing when saves of one process run concurrently', async () => {
    const stash = new StashStore(path);
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => stash.save(`p${i}`)));
    const list = await stash.list();
    expect(list).toHaveLength(30);
    expect(new Set(list.map((e) => e.id))).toEqual(new Set(ids));
  });

  it('loses nothing when two processes save 50 entries each at the same time', async () => {
    await Promise.all([runChild(['stash', path, '50', 'A']), runChild(['stash', path, '50', 'B'])]);
    const list = await new StashStore(path).list();
    expect(list).toHaveLength(100);
    expect(new Set(list.map((e) => e.id)).size).toBe(100);
    const texts = new Set(list.map((e) => e.text));
    for (let i = 0; i < 50; i++) {
      expect(texts.has(`A-${i}`)).toBe(true);
      expect(texts.has(`B-${i}`)).toBe(true);
    }
    // Each process's own entries stay newest first.
    const aOrder = list.filter((e) => e.text.startsWith('A-')).map((e) => e.text);
    expect(aOrder).toEqual(Array.from({ length: 50 }, (_, i) => `A-${49 - i}`));
    expect(await fsp.readdir(join(dir, 'nested'))).toEqual(['stash.json']);
  });
});

describe('defaultStashPath', () => {
  it('uses XDG_DATA_HOME on Linux', () => {
    expect(
      defaultStashPath({ platform: 'linux', env: { XDG_DATA_HOME: '/data' }, homedir: '/home/u' }),
    ).toBe('/data/sessionkit/stash.json');
  });

  it('falls back to ~/.local/share when XDG_DATA_HOME is unset or relative', () => {
    for (const env of [{}, { XDG_DATA_HOME: '' }, { XDG_DATA_HOME: 'relative/dir' }]) {
      expect(defaultStashPath({ platform: 'linux', env, homedir: '/home/u' })).toBe(
        '/home/u/.local/share/sessionkit/stash.json',
      );
    }
    expect(defaultStashPath({ platform: 'freebsd', env: {}, homedir: '/home/u' })).toBe(
      '/home/u/.local/share/sessionkit/stash.json',
    );
  });

  it('uses Application Support on macOS', () => {
    expect(
      defaultStashPath({ platform: 'darwin', env: { XDG_DATA_HOME: '/x' }, homedir: '/Users/u' }),
    ).toBe('/Users/u/Library/Application Support/sessionkit/stash.json');
  });

  it('uses %APPDATA% on Windows', () => {
    expect(
      defaultStashPath({
        platform: 'win32',
        env: { APPDATA: 'C:\\Users\\u\\AppData\\Roaming' },
        homedir: 'C:\\Users\\u',
      }),
    ).toBe('C:\\Users\\u\\AppData\\Roaming\\sessionkit\\stash.json');
    expect(defaultStashPath({ platform: 'win32', env: {}, homedir: 'C:\\Users\\u' })).toBe(
      'C:\\Users\\u\\AppData\\Roaming\\sessionkit\\stash.json',
    );
  });

  it('defaults to this process and ends in sessionkit/stash.json', () => {
    expect(defaultStashPath()).toMatch(/sessionkit[\\/]stash\.json$/);
  });
});
