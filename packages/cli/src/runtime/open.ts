import { isSessionKitError, openStore, redactUrl, type Store } from '@sessionkit/core';
import { type LoadedAdapter, loadAdapter } from './adapters.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';
import { redactText } from './redact.js';
import { schemeOf } from './store-url.js';

/** A store the command opened, with how to name it in messages. */
export interface OpenedStore {
  store: Store;
  /** The URL without credentials: the only form ever printed. */
  display: string;
  scheme: string;
  /** The first-party adapter package that opened it, when there is one. */
  adapter: LoadedAdapter | undefined;
}

/**
 * Opens `url` through core's `openStore`, after loading the scheme's first-party adapter
 * from beside the command (so adapters installed with the command are found). Throws a
 * `CliError`: exit 2 for a malformed URL or bad URL parameters, exit 1 for a missing
 * adapter package or a store that cannot be reached, each one line naming the store
 * without credentials and what to do.
 */
export async function openCliStore(url: string): Promise<OpenedStore> {
  const display = redactUrl(url);
  const scheme = schemeOf(url);
  const adapter = await loadAdapter(scheme);
  try {
    return { store: await openStore(url), display, scheme, adapter };
  } catch (e) {
    throw openFailure(e, display);
  }
}

function openFailure(e: unknown, display: string): CliError {
  const reason = redactText(e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ');
  if (isSessionKitError(e, 'invalid_argument')) {
    return new CliError(
      `cannot open store ${display}: ${reason} — check the store URL and its parameters`,
      EXIT.usage,
      { cause: e },
    );
  }
  if (isSessionKitError(e, 'unavailable')) {
    return new CliError(
      `cannot reach store ${display}: ${reason} — check that it is running and reachable, then retry`,
      EXIT.failure,
      { cause: e },
    );
  }
  return new CliError(`cannot open store ${display}: ${reason}`, EXIT.failure, { cause: e });
}

/**
 * Opens `url`, runs `work` with the store and closes the store afterwards, also when
 * `work` throws (a close failure after a success is reported; after a failure the first
 * error wins).
 */
export async function withStore<T>(
  url: string,
  work: (opened: OpenedStore) => Promise<T>,
): Promise<T> {
  const opened = await openCliStore(url);
  let result: T;
  try {
    result = await work(opened);
  } catch (e) {
    await opened.store.close().catch(() => undefined);
    throw e;
  }
  await opened.store.close();
  return result;
}
