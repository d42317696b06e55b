// The descriptor cache (io/kept-files.ts): least recently used first, evicted a share at
// a time once full, never closing a descriptor taken out.
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeptFiles } from '../src/io/kept-files.js';

const root = mkdtempSync(join(tmpdir(), 'sk-kept-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A descriptor of a new file and whether it is still open. */
function opened(name: string) {
  const fd = openSync(join(root, name), 'a', 0o600);
  return { fd, ino: Number(fstatSync(fd).ino) };
}
const isOpen = (fd: number) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

describe('KeptFiles', () => {
  it('closes the least recently used sixteenth once full, and keeps the rest', () => {
    const kept = new KeptFiles(32);
    const files = Array.from({ length: 32 }, (_, i) => ({ path: `f${i}`, ...opened(`f${i}`) }));
    for (const f of files) kept.keep(f.path, f.fd, f.ino, false);
    // f0 used again: now the newest.
    const f0 = kept.take('f0', files[0]!.ino)!;
    kept.keep('f0', f0, files[0]!.ino, false);
    const extra = opened('extra');
    kept.keep('extra', extra.fd, extra.ino, false);
    // 33 > 32: down to 30 (32 less a sixteenth), the oldest first: f1, f2, f3.
    const still = files.filter((f) => kept.isPinned(f.path, f.ino)).map((f) => f.path);
    expect(still).toHaveLength(29);
    expect(still).not.toContain('f1');
    expect(still).not.toContain('f3');
    expect(still).toContain('f0');
    expect(still).toContain('f4');
    expect(kept.isPinned('extra', extra.ino)).toBe(true);
    for (const f of files.slice(1, 4)) expect(isOpen(f.fd)).toBe(false);
    expect(isOpen(files[4]!.fd)).toBe(true);
    // A descriptor taken out is its user's: eviction never closes it.
    const taken = kept.take('f4', files[4]!.ino)!;
    for (let i = 0; i < 40; i++) {
      const f = opened(`g${i}`);
      kept.keep(`g${i}`, f.fd, f.ino, false);
    }
    expect(isOpen(taken)).toBe(true);
    closeSync(taken);
    kept.dropAll();
    expect(isOpen(extra.fd)).toBe(false);
  });
});
