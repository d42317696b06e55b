import type { ConformanceTest } from '../harness.js';
import type { SpecName } from '../types.js';
import { badIdSweepSpec, badInputSpec } from './bad-input.js';
import { brancherSpec } from './brancher.js';
import { committerSpec } from './committer.js';
import { concurrencySpec } from './concurrency.js';
import { errorMessageSpec } from './error-messages.js';
import { eventLogSpec } from './event-log.js';
import { historyReaderSpec } from './history-reader.js';
import { inputOnceSpec } from './input-once.js';
import { storeListingSpec } from './listing.js';
import { mergeSpec } from './merge.js';
import { messageWindowSpec } from './message-window.js';
import { modelBasedSpec } from './model-based.js';
import { openStoreSpec } from './open-store.js';
import { operationsSpec } from './operations.js';
import { prunerSpec } from './pruner.js';
import { repairerSpec } from './repairer.js';
import { runtimeStatusSpec } from './runtime-status.js';
import { searchSpec } from './search.js';
import { sessionRouterSpec } from './session-router.js';
import { signalSpec } from './signal.js';
import { storeSpec } from './store.js';
import { truncateSpec } from './truncate.js';
import { valueLimitsSpec } from './value-limits.js';

/** Every spec file's tests, in the order they run. */
export const ALL_SPECS: Record<SpecName, ConformanceTest[]> = {
  store: [...storeSpec, ...storeListingSpec],
  committer: committerSpec,
  brancher: brancherSpec,
  'history-reader': historyReaderSpec,
  'runtime-status': runtimeStatusSpec,
  'session-router': sessionRouterSpec,
  'event-log': eventLogSpec,
  pruner: prunerSpec,
  repairer: repairerSpec,
  'bad-input': [...badInputSpec, ...badIdSweepSpec, ...errorMessageSpec],
  concurrency: concurrencySpec,
  merge: mergeSpec,
  'value-limits': valueLimitsSpec,
  search: searchSpec,
  'message-window': messageWindowSpec,
  model: modelBasedSpec,
  'open-store': openStoreSpec,
  operations: operationsSpec,
  truncate: truncateSpec,
  signal: signalSpec,
  input: inputOnceSpec,
};

/** Human titles used in `describe` blocks. */
export const SPEC_TITLES: Record<SpecName, string> = {
  store: 'Store',
  committer: 'Committer',
  brancher: 'Brancher',
  'history-reader': 'HistoryReader',
  'runtime-status': 'RuntimeStatusStore',
  'session-router': 'SessionRouter',
  'event-log': 'EventLog',
  pruner: 'Pruner',
  repairer: 'Repairer',
  'bad-input': 'bad input',
  concurrency: 'concurrency',
  merge: 'Brancher: merge rules',
  'value-limits': 'value limits',
  search: 'search',
  'message-window': 'HistoryReader: windows',
  model: 'model-based',
  'open-store': 'openStore(url)',
  operations: 'Committer: operation ids',
  truncate: 'Committer: truncate',
  signal: 'signals',
  input: 'input read once',
};
