// `defaultFileStoreDir()` (default-dir.ts): each platform's per-user data folder.
import { promises as fsp } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultFileStoreDir, FileStore } from '../src/index.js';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await fsp.rm(r, { recursive: true, force: true });
});

describe('default folder', () => {
  it('follows XDG on Linux, Application Support on macOS, LOCALAPPDATA on Windows', () => {
    expect(defaultFileStoreDir({ XDG_DATA_HOME: '/x/data' }, 'linux', '/home/u')).toBe(
      '/x/data/sessionkit/sessions',
    );
    expect(defaultFileStoreDir({}, 'linux', '/home/u')).toBe(
      '/home/u/.local/share/sessionkit/sessions',
    );
    // A relative XDG_DATA_HOME is ignored, as the spec says.
    expect(defaultFileStoreDir({ XDG_DATA_HOME: 'rel' }, 'freebsd', '/home/u')).toBe(
      '/home/u/.local/share/sessionkit/sessions',
    );
    expect(defaultFileStoreDir({ XDG_DATA_HOME: '/x' }, 'darwin', '/Users/u')).toBe(
      '/Users/u/Library/Application Support/sessionkit/sessions',
    );
    expect(
      defaultFileStoreDir(
        { LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' },
        'win32',
        'C:\\Users\\u',
      ),
    ).toBe('C:\\Users\\u\\AppData\\Local\\sessionkit\\sessions');
    expect(defaultFileStoreDir({}, 'win32', 'C:\\Users\\u')).toBe(
      'C:\\Users\\u\\AppData\\Local\\sessionkit\\sessions',
    );
    const saved = process.env.XDG_DATA_HOME;
    process.env.XDG_DATA_HOME = '/tmp/sk-xdg-test';
    try {
      if (process.platform === 'linux') {
        expect(new FileStore().dir).toBe('/tmp/sk-xdg-test/sessionkit/sessions');
      }
    } finally {
      if (saved === undefined) delete process.env.XDG_DATA_HOME;
      else process.env.XDG_DATA_HOME = saved;
    }
  });
});
