// migrations/index.ts: the list of migrations, one file each. Released migrations are
// recorded by version in every database that ran them: their SQL must never change.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, MIGRATIONS } from '../src/migrations/index.js';

/** SHA-256 of each released migration's SQL for the schema `"sk"` (taken before the split). */
const RELEASED: Record<number, { name: string; sha256: string }> = {
  1: {
    name: 'initial',
    sha256: '538adf55586df56bffc1fd1166ee1134f3c5d3cca967b4a530ca96f229aad98f',
  },
  2: {
    name: 'delete_locks_parent_enforce_max_recheck',
    sha256: '2e26aa391bc1957cda8c33930c2b11b54be9447e89d872151959a3edcad68a93',
  },
  3: {
    name: 'enforce_max_locks_only_victims',
    sha256: '85eb2649a7e6c465d793f6f10af63f67772a04fabb7e71f8fe3f9e41f7d6b08f',
  },
  4: {
    name: 'lineage_counter_checks_search_separator',
    sha256: 'db1b5d4276b33354b29ab1500f25efcf4f55ede41555780583b3e005aa7fe161',
  },
};

describe('migrations › the list', () => {
  it('is versions 1, 2, 3 … in order, the last one LATEST_VERSION', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(LATEST_VERSION).toBe(MIGRATIONS.length);
  });

  it('released migrations keep their name and their SQL byte for byte', () => {
    for (const m of MIGRATIONS) {
      const released = RELEASED[m.version];
      if (!released) continue;
      expect(m.name).toBe(released.name);
      const sha256 = createHash('sha256').update(m.sql('"sk"')).digest('hex');
      expect({ version: m.version, sha256 }).toEqual({
        version: m.version,
        sha256: released.sha256,
      });
    }
  });
});
