// File modes: folders 0700, files 0600, temp files included.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/index.js';
import { tempFolders } from './helpers.js';

const folders = tempFolders();
const fresh = folders.root;

describe('privacy', () => {
  it.skipIf(process.platform === 'win32')('creates folders 0700 and files 0600', async () => {
    const dir = join(fresh(), 'a', 'store');
    const store = new FileStore({ dir, snapshotEvery: 2 });
    await store.create({ id: 's', messages: [{ role: 'user', content: 'secret' }] });
    for (let i = 0; i < 5; i++)
      await store.commit('s', { append: [{ role: 'user', content: `m${i}` }] });
    await store.commit('s', { replace: [] });
    await store.append('s', 'e', { x: 1 });
    await store.saveRuntimeStatus('s', { ok: true });
    await store.bind('tg', 'chat', '', 's');
    await store.branch('s', 0);
    await store.delete('s');
    await store.create({ id: 't' });
    await store.repair();
    const seen: string[] = [];
    const walk = (p: string) => {
      const st = statSync(p);
      const mode = st.mode & 0o777;
      seen.push(`${p.slice(dir.length) || '/'} ${mode.toString(8)}`);
      if (st.isDirectory()) {
        expect(mode, p).toBe(0o700);
        for (const n of readdirSync(p)) walk(join(p, n));
      } else {
        expect(mode, p).toBe(0o600);
      }
    };
    walk(dir);
    expect(statSync(join(dir, '..')).mode & 0o777).toBe(0o700); // created parent too
    expect(seen.some((s) => s.startsWith('/router.json'))).toBe(true);
    expect(seen.some((s) => s.includes('/events.skr'))).toBe(false); // deleted with s
    await store.close();
  });

  it.skipIf(process.platform === 'win32')(
    "keeps the group-commit journal and held leases private too (sync: 'group')",
    async () => {
      const dir = join(fresh(), 'group');
      const store = new FileStore({ dir, sync: 'group' });
      await store.create({ id: 'g' });
      await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          store.commit('g', { append: [{ role: 'user', content: `m${i}` }] }),
        ),
      );
      // Before close: the journal and the session's lease are on disk now.
      const files: string[] = [];
      const walk = (p: string) => {
        const st = statSync(p);
        if (st.isDirectory()) {
          expect(st.mode & 0o777, p).toBe(0o700);
          for (const n of readdirSync(p)) walk(join(p, n));
        } else {
          files.push(p.slice(dir.length));
          expect(st.mode & 0o777, p).toBe(0o600);
        }
      };
      walk(dir);
      expect(files.some((f) => f.startsWith('/locks/') && f.endsWith('.lock'))).toBe(true);
      expect(files.some((f) => f.startsWith('/journal/'))).toBe(true);
      await store.close();
    },
  );
});
