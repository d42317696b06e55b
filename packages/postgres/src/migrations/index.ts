// Every migration, oldest first, one file each. Never edit a released one (databases record
// the versions they ran): add the next version in a new file and list it here.
import { migration001 } from './001-initial.js';
import { migration002 } from './002-delete-locks-parent-enforce-max-recheck.js';
import { migration003 } from './003-enforce-max-locks-only-victims.js';
import { migration004 } from './004-lineage.js';
import { migration005 } from './005-deferred-search-index.js';
import { migration006 } from './006-search-blocks.js';
import { migration007 } from './007-root-count.js';
import { migration008 } from './008-operations-truncate.js';
import { migration009 } from './009-search-storage.js';
import { migration010 } from './010-operations-one-index.js';
import { migration011 } from './011-chunks-by-scope.js';
import { migration012 } from './012-updated-at-range.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

/** Every migration, oldest first (the layout they build: see 001-initial.ts). */
export const MIGRATIONS: readonly Migration[] = [
  migration001,
  migration002,
  migration003,
  migration004,
  migration005,
  migration006,
  migration007,
  migration008,
  migration009,
  migration010,
  migration011,
  migration012,
];

/** The newest schema version this package knows. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
