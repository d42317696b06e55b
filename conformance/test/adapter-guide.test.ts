// docs/writing-an-adapter.md cannot drift: its minimal adapter is the file the packed
// end-to-end test runs, and every kit function it names is exported by the adapter kit.
import { readFileSync } from 'node:fs';
import * as kit from '@sessionkit/core/adapter';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const guide = read('../../docs/writing-an-adapter.md');

describe('docs/writing-an-adapter.md', () => {
  it('shows the minimal adapter exactly as packed.test.ts runs it', () => {
    const marker = guide.indexOf('<!-- map-store.js:');
    expect(marker).toBeGreaterThan(0);
    const start = guide.indexOf('```js\n', marker) + '```js\n'.length;
    const end = guide.indexOf('```', start);
    expect(guide.slice(start, end)).toBe(read('./fixtures/author/map-store.js'));
  });

  it('names only functions and constants the adapter kit exports', () => {
    const table = guide.slice(guide.indexOf('## The kit'), guide.indexOf('## A minimal adapter'));
    const named = new Set<string>();
    for (const line of table.split('\n').filter((l) => l.startsWith('| '))) {
      const cell = line.split('|')[2] ?? '';
      for (const m of cell.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)/g)) named.add(m[1]!);
    }
    // Not runtime exports of the kit: the error factory, types, field names and an error code.
    for (const word of [
      'errors',
      'StoreAdapter',
      'SessionState',
      'MessageChange',
      'schemes',
      'updatedAt',
      'list',
      'too_large',
    ])
      named.delete(word);
    expect(named.size).toBeGreaterThan(30);
    const missing = [...named].filter((name) => !(name in kit));
    expect(missing).toEqual([]);
  });

  it('lists exactly the primitives BaseStore has, by capability', () => {
    const table = guide.slice(
      guide.indexOf('## Implement these primitives'),
      guide.indexOf('## The kit'),
    );
    const rows = new Map<string, string[]>();
    for (const line of table.split('\n').filter((l) => l.startsWith('| `'))) {
      const [, cap = '', cell = ''] = line.split('|');
      const name = /`(\w+)`/.exec(cap)?.[1] ?? '';
      rows.set(
        name,
        [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1]!),
      );
    }
    const expected = new Map<string, string[]>([
      [
        'Store',
        ['insertSession', 'readSession', 'replaceSession', 'removeSession', 'listSummaries'],
      ],
      ...kit.CAPABILITY_PRIMITIVES.map(
        (c) => [c.capability, [...c.primitives]] as [string, string[]],
      ),
    ]);
    expect(rows).toEqual(expected);
  });
});
