import type { ListOptions } from '@sessionkit/core';
import { isSessionKitError } from '@sessionkit/core';
import { errorsFor } from '@sessionkit/core/adapter';
import type { IndexEntry } from '@sessionkit/memory';
import type { BrokenVariant } from './variants.js';

const errors = errorsFor('memory');

/**
 * Broken variants for what conformance v2's second pass added: argument names in errors,
 * repair of every kind of index damage, deletes past unreadable children. Each is one
 * plausible bug on the memory adapter and names the tests that must fail.
 */
export const KIT_VARIANTS: BrokenVariant[] = [
  {
    name: 'errors-without-argument-names',
    bug: "list's invalid_argument says only that the options are bad, not which one",
    caughtBy: [
      { spec: 'bad-input', test: 'an invalid_argument for list with limit -1 names "limit"' },
      { spec: 'bad-input', test: 'an invalid_argument for list with offset -1 names "offset"' },
    ],
    override: (inner) => ({
      async list(options?: ListOptions) {
        try {
          return await inner.list(options);
        } catch (e) {
          if (isSessionKitError(e, 'invalid_argument')) throw errors.invalid('bad list options');
          throw e;
        }
      },
    }),
  },
  {
    name: 'repair-keeps-stray-entries',
    bug: 'repair rebuilds the entries of stored sessions but keeps entries of sessions that do not exist',
    caughtBy: [
      {
        spec: 'repairer',
        test: 'repair rebuilds every kind of damaged index entry from the authoritative data',
      },
    ],
    override: (inner) => ({
      async repair() {
        const strays: [string, IndexEntry][] = [...inner.backend.index].filter(
          ([id]) => !inner.backend.records.has(id),
        );
        const report = await inner.repair();
        for (const [id, entry] of strays) inner.backend.index.set(id, entry);
        return { ...report, indexEntriesFixed: report.indexEntriesFixed - strays.length };
      },
    }),
  },
  {
    name: 'delete-blocked-by-unreadable-child',
    bug: 'deleting a parent reads every child first and fails when one is unreadable',
    caughtBy: [
      {
        spec: 'repairer',
        test: 'deleting a parent promotes its readable children past unreadable ones',
      },
    ],
    override: (inner) => ({
      async delete(id: string) {
        for (const child of inner.backend.childrenOf.get(id) ?? []) await inner.load(child);
        return inner.delete(id);
      },
    }),
  },
];
