// memory: URLs for core's openStore.
import type { Message } from '@sessionkit/core';
import { assertKnownKeys, errorsFor, type StoreAdapter } from '@sessionkit/core/adapter';
import { MemoryBackend } from './backend.js';
import { MemoryStore } from './store.js';

const errors = errorsFor('memory');

/**
 * Opens `memory:` URLs for core's `openStore`. `memory:` gives a store on a new private
 * backend; `memory:NAME` (also `memory://NAME`) a store on the process-wide backend `NAME`
 * (`MemoryBackend.named`), so every store opened with the same name shares its data.
 * Options: `{ backend }` as in `MemoryStoreOptions`, only with a bare `memory:` URL.
 * Throws `invalid_argument` for unknown options, any URL query or fragment, or a name
 * together with a backend.
 */
export const storeAdapter: StoreAdapter = {
  schemes: ['memory'],
  async open(url: URL, options?: Record<string, unknown>) {
    assertKnownKeys(errors, options, ['backend'], 'openStore(memory:)');
    // A memory: URL has no options: a query or fragment is a mistake, not something to ignore.
    if (url.search !== '' || url.hash !== '') {
      throw errors.invalid(
        `openStore(memory:): unknown URL option "${url.search || url.hash}" (memory: URLs take none)`,
      );
    }
    const raw = `${url.host}${url.pathname}`.replace(/^\/+/, '');
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch (cause) {
      throw errors.make('invalid_argument', `openStore: bad memory backend name "${raw}"`, {
        cause,
      });
    }
    const given = options?.backend as MemoryBackend | undefined;
    if (name !== '' && given !== undefined) {
      throw errors.invalid(
        `openStore(memory:): give either a backend name in the URL or options.backend, not both`,
      );
    }
    const backend = name === '' ? given : MemoryBackend.named(name);
    return new MemoryStore<Message>({ backend });
  },
};
