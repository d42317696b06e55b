// Two stores of one process asking for the same session's lock at the same moment: a
// lease handed over to the other store is never released before its own write has run,
// so no two writes of one session ever run at once and each runs holding the lock.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LeaseTable } from '../src/session/lease.js';

const root = mkdtempSync(join(tmpdir(), 'sk-lease-handover-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tables(n: number): LeaseTable[] {
  const dir = mkdtempSync(join(root, 'store-'));
  const locksDir = join(dir, 'locks');
  const wantsDir = join(locksDir, 'wants');
  mkdirSync(wantsDir, { recursive: true });
  const options = {
    locksDir,
    wantsDir,
    lockPath: (id: string) => join(locksDir, `${id}.lock`),
    timeoutMs: 10_000,
    staleMs: 30_000,
    leaseMs: 10_000,
  };
  return Array.from({ length: n }, () => new LeaseTable(options));
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('lease handover between stores of one process', () => {
  it('writes asked for at once by two stores never overlap, and each runs holding the lease', async () => {
    for (let round = 0; round < 40; round++) {
      const [a, b] = tables(2) as [LeaseTable, LeaseTable];
      let inside = 0;
      let overlaps = 0;
      const unheld: number[] = [];
      const write = (table: LeaseTable, n: number) =>
        table.run(
          'x',
          async () => {
            if (table.epochOf('x') === undefined) unheld.push(n);
            inside++;
            if (inside > 1) overlaps++;
            await tick();
            inside--;
          },
          true,
        );
      // Each store's next write starts while the other's is being taken or runs.
      await Promise.all(Array.from({ length: 6 }, (_, n) => write(n % 2 ? b : a, n)));
      await Promise.all([a.close(), b.close()]);
      expect({ round, overlaps, unheld }).toEqual({ round, overlaps: 0, unheld: [] });
    }
  });
});
