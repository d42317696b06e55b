import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ensurePrivateDir,
  fsyncDir,
  tempPathFor,
  writeFileAtomic,
} from '../src/fs/atomic-write.js';
import { errnoCode } from '../src/fs/errno.js';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const posixModes = process.platform !== 'win32';

let dir: string;
beforeEach(async () => {
  dir = await fsp.mkdtemp(join(tmpdir(), 'sk-atomic-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await fsp.chmod(dir, 0o700).catch(() => {});
  await fsp.rm(dir, { recursive: true, force: true });
});

const leftovers = async (d: string) => (await fsp.readdir(d)).filter((n) => n.endsWith('.tmp'));
const modeOf = async (p: string) => (await fsp.stat(p)).mode & 0o777;

describe('writeFileAtomic', () => {
  it('creates a file with the content and mode 0600 by default', async () => {
    const p = join(dir, 'a.json');
    await writeFileAtomic(p, '{"a":1}');
    expect(await fsp.readFile(p, 'utf8')).toBe('{"a":1}');
    if (posixModes) expect(await modeOf(p)).toBe(0o600);
    expect(await leftovers(dir)).toEqual([]);
  });

  it('replaces existing content entirely, also with shorter data', async () => {
    const p = join(dir, 'a.txt');
    await fsp.writeFile(p, 'x'.repeat(10_000), { mode: 0o644 });
    await writeFileAtomic(p, 'short');
    expect(await fsp.readFile(p, 'utf8')).toBe('short');
    // The new file carries the requested mode, not the old file's.
    if (posixModes) expect(await modeOf(p)).toBe(0o600);
  });

  it('writes bytes and unicode exactly', async () => {
    const p = join(dir, 'b.bin');
    const bytes = new Uint8Array([0, 1, 2, 250, 255, 10]);
    await writeFileAtomic(p, bytes);
    expect(new Uint8Array(await fsp.readFile(p))).toEqual(bytes);
    await writeFileAtomic(p, 'héllo 🌍 \u0000 end');
    expect(await fsp.readFile(p, 'utf8')).toBe('héllo 🌍 \u0000 end');
  });

  it.runIf(posixModes)('applies an explicit mode exactly, regardless of the umask', async () => {
    const p = join(dir, 'shared.txt');
    await writeFileAtomic(p, 'x', { mode: 0o666 });
    expect(await modeOf(p)).toBe(0o666);
    await writeFileAtomic(p, 'y', { mode: 0o640, fsyncDir: false });
    expect(await modeOf(p)).toBe(0o640);
    expect(await fsp.readFile(p, 'utf8')).toBe('y');
  });

  it('uses a hidden, unique temp file in the same folder', async () => {
    const p = join(dir, 'target.json');
    const renames: string[] = [];
    const realRename = fsp.rename;
    vi.spyOn(fsp, 'rename').mockImplementation(async (from, to) => {
      renames.push(String(from));
      return realRename(from, to);
    });
    await writeFileAtomic(p, '1');
    await writeFileAtomic(p, '2');
    expect(renames).toHaveLength(2);
    for (const from of renames) {
      expect(from.startsWith(join(dir, '.target.json.'))).toBe(true);
      expect(from).toMatch(/\.target\.json\.[0-9a-f]{32}\.tmp$/);
    }
    expect(renames[0]).not.toBe(renames[1]);
  });

  it('keeps the old content and removes the temp file when the rename fails', async () => {
    const p = join(dir, 'keep.txt');
    await writeFileAtomic(p, 'old');
    vi.spyOn(fsp, 'rename').mockRejectedValueOnce(
      Object.assign(new Error('EIO: simulated'), { code: 'EIO' }),
    );
    await expect(writeFileAtomic(p, 'new')).rejects.toMatchObject({ code: 'EIO' });
    expect(await fsp.readFile(p, 'utf8')).toBe('old');
    expect(await leftovers(dir)).toEqual([]);
  });

  it('removes the temp file when the target cannot be replaced (it is a folder)', async () => {
    const p = join(dir, 'occupied');
    await fsp.mkdir(p);
    await fsp.writeFile(join(p, 'inside'), 'keep');
    await expect(writeFileAtomic(p, 'data')).rejects.toHaveProperty('code');
    expect(await leftovers(dir)).toEqual([]);
    expect(await fsp.readFile(join(p, 'inside'), 'utf8')).toBe('keep');
  });

  it('fails with ENOENT when the folder is missing and creates nothing', async () => {
    const p = join(dir, 'missing', 'x.json');
    await expect(writeFileAtomic(p, 'x')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await fsp.readdir(dir)).toEqual([]);
  });

  it.runIf(posixModes && !isRoot)(
    'fails in a read-only folder and leaves the old content',
    async () => {
      const p = join(dir, 'ro.txt');
      await writeFileAtomic(p, 'old');
      await fsp.chmod(dir, 0o500);
      await expect(writeFileAtomic(p, 'new')).rejects.toMatchObject({ code: 'EACCES' });
      await fsp.chmod(dir, 0o700);
      expect(await fsp.readFile(p, 'utf8')).toBe('old');
      expect(await leftovers(dir)).toEqual([]);
    },
  );

  it('leaves exactly one complete version after concurrent writers', async () => {
    const p = join(dir, 'race.txt');
    const versions = Array.from({ length: 20 }, (_, i) => `${i}:`.padEnd(5000, String(i % 10)));
    await Promise.all(versions.map((v) => writeFileAtomic(p, v)));
    expect(versions).toContain(await fsp.readFile(p, 'utf8'));
    expect(await leftovers(dir)).toEqual([]);
  });

  it('keeps temp names within file-name limits for very long names', async () => {
    const p = join(dir, 'é'.repeat(120)); // 240 bytes
    await writeFileAtomic(p, 'ok');
    expect(await fsp.readFile(p, 'utf8')).toBe('ok');
  });

  it('rejects data that is neither a string nor bytes', async () => {
    await expect(writeFileAtomic(join(dir, 'x'), 42 as unknown as string)).rejects.toThrow(
      TypeError,
    );
    await expect(writeFileAtomic('', 'x')).rejects.toThrow(TypeError);
  });
});

describe('tempPathFor', () => {
  it('is a hidden, unique .<name>.<random>.tmp path in the same folder', () => {
    const p = join(dir, 'state.json');
    const a = tempPathFor(p);
    const b = tempPathFor(p);
    expect(a.startsWith(join(dir, '.state.json.'))).toBe(true);
    expect(a).toMatch(/\.state\.json\.[0-9a-f]{32}\.tmp$/);
    expect(a).not.toBe(b);
  });

  it('cuts long names by whole characters so the temp name fits 255 bytes', () => {
    const long = '🌍'.repeat(100); // 400 bytes
    const name = tempPathFor(join(dir, long)).slice(dir.length + 1);
    expect(Buffer.byteLength(name, 'utf8')).toBeLessThanOrEqual(255);
    expect(name).toMatch(/^\.(🌍)+\.[0-9a-f]{32}\.tmp$/u);
  });
});

describe('errnoCode', () => {
  it('returns a string code and undefined for anything else', () => {
    expect(errnoCode(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe('ENOENT');
    expect(errnoCode({ code: 42 })).toBeUndefined();
    expect(errnoCode(new Error('x'))).toBeUndefined();
    expect(errnoCode(null)).toBeUndefined();
    expect(errnoCode(undefined)).toBeUndefined();
    expect(errnoCode('ENOENT')).toBeUndefined();
  });
});

describe('fsyncDir', () => {
  it('succeeds on an existing folder and throws ENOENT for a missing one', async () => {
    await expect(fsyncDir(dir)).resolves.toBeUndefined();
    await expect(fsyncDir(join(dir, 'nope'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('ensurePrivateDir', () => {
  it('creates nested folders with mode 0700', async () => {
    const leaf = join(dir, 'a', 'b', 'c');
    await ensurePrivateDir(leaf);
    expect((await fsp.stat(leaf)).isDirectory()).toBe(true);
    if (posixModes) {
      expect(await modeOf(leaf)).toBe(0o700);
      expect(await modeOf(join(dir, 'a'))).toBe(0o700);
    }
  });

  it.runIf(posixModes)(
    'never changes the mode of an existing folder (0755 stays 0755)',
    async () => {
      const leaf = join(dir, 'open');
      await fsp.mkdir(leaf);
      await fsp.chmod(leaf, 0o755);
      await ensurePrivateDir(leaf);
      expect(await modeOf(leaf)).toBe(0o755);
      await ensurePrivateDir(leaf);
      expect(await modeOf(leaf)).toBe(0o755);
    },
  );

  it.runIf(posixModes)(
    'creates only the missing folders, at 0700, below an existing 0755 folder',
    async () => {
      const proj = join(dir, 'proj');
      await fsp.mkdir(proj);
      await fsp.chmod(proj, 0o755);
      await ensurePrivateDir(join(proj, 'a', 'b', 'c'));
      expect(await modeOf(proj)).toBe(0o755);
      for (const p of ['a', 'a/b', 'a/b/c']) expect(await modeOf(join(proj, p))).toBe(0o700);
      expect(await modeOf(dir)).toBe(0o700); // mkdtemp's mode, untouched
    },
  );

  it.runIf(posixModes)(
    'resolves a relative path and leaves its existing parents alone',
    async () => {
      await fsp.chmod(dir, 0o755);
      await ensurePrivateDir(relative(process.cwd(), join(dir, 'rel', 'x')));
      expect(await modeOf(dir)).toBe(0o755);
      expect(await modeOf(join(dir, 'rel'))).toBe(0o700);
      expect(await modeOf(join(dir, 'rel', 'x'))).toBe(0o700);
    },
  );

  it.runIf(posixModes)(
    'sets 0700 exactly on what it creates even when the umask clears bits',
    async () => {
      let old: number;
      try {
        old = process.umask(0o100); // clears the owner's x bit on new folders
      } catch {
        return; // umask cannot be changed here (worker thread)
      }
      try {
        await ensurePrivateDir(join(dir, 'masked'));
      } finally {
        process.umask(old);
      }
      expect(await modeOf(join(dir, 'masked'))).toBe(0o700);
    },
  );

  it('throws ENOTDIR when the path is a file', async () => {
    const file = join(dir, 'file');
    await fsp.writeFile(file, 'x');
    await expect(ensurePrivateDir(file)).rejects.toHaveProperty('code');
    expect(await fsp.readFile(file, 'utf8')).toBe('x');
  });
});
