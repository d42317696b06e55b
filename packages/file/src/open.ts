import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '@sessionkit/core';
import type { StoreAdapter } from '@sessionkit/core/adapter';
import { assertKnownKeys, errorsFor } from '@sessionkit/core/adapter';
import type { FileStoreOptions } from './options.js';
import { FileStore } from './store.js';
import { optionsFromUrl, URL_OPTION_KEYS } from './url-options.js';

const errors = errorsFor('file');

/**
 * The folder a `file:` URL names. `file:///abs/path` and `file:/abs/path` are absolute;
 * `file:./sessions`, `file:sessions` and `file:../x` are relative to the working directory
 * (read from the URL as written, since URL parsing drops the leading `.`). Percent escapes
 * are decoded. Throws `invalid_argument` for a remote host, an empty path or `/`.
 */
export function dirFromFileUrl(url: URL, source?: string): string {
  if (url.protocol !== 'file:') throw errors.invalid(`not a file: URL: ${url.protocol}`);
  if (url.host !== '' && url.host !== 'localhost') {
    throw errors.invalid(`file: URLs must name a local path, not host "${url.host}"`);
  }
  const raw =
    typeof source === 'string' ? source.replace(/^file:/i, '').replace(/[?#].*$/, '') : '';
  if (raw !== '' && !raw.startsWith('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      throw errors.invalid(`bad escape in file: URL "${source}"`);
    }
    return resolve(process.cwd(), decoded);
  }
  const path = fileURLToPath(url);
  if (resolve(path) === resolve('/')) {
    throw errors.invalid('file: URL names the root folder (or nothing); give a store folder');
  }
  return path;
}

/**
 * Opens `file:` URLs for core's `openStore` (`file:./sessions`, `file:///abs/path`,
 * `file:./sessions?sync=false&lockTimeoutMs=2000`). Options, in the options object or as
 * query parameters (not both for one key): every `FileStoreOptions` field but `dir`
 * (`snapshotEvery`, `sync`, `lockTimeoutMs`, `lockStaleMs`, `indexSlackBytes`), validated
 * alike; the folder comes from the URL's path. Throws `invalid_argument` for an unknown
 * option or query parameter (naming it and the known ones), a bad value, or a remote host.
 */
export const storeAdapter: StoreAdapter = {
  schemes: ['file'],
  async open(url: URL, options?: Record<string, unknown>, source?: string) {
    assertKnownKeys(errors, options, URL_OPTION_KEYS, 'openStore(file:)');
    const fromUrl = optionsFromUrl(url, options);
    const dir = dirFromFileUrl(url, source);
    return new FileStore<Message>({
      ...(options as FileStoreOptions | undefined),
      ...fromUrl,
      dir,
    });
  },
};
