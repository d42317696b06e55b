// Store options given as query parameters of a `file:` URL
// (`file:./sessions?sync=false&lockTimeoutMs=2000`).

import { errorsFor } from '@sessionkit/core/adapter';
import { type FileStoreOptions, OPTION_KEYS } from './options.js';

const errors = errorsFor('file');

/** The `FileStoreOptions` a `file:` URL may carry (every one but `dir`, which is the path). */
type UrlOptionKey = Exclude<(typeof OPTION_KEYS)[number], 'dir'>;
export const URL_OPTION_KEYS: readonly UrlOptionKey[] = OPTION_KEYS.filter(
  (key): key is UrlOptionKey => key !== 'dir',
);

const DECIMAL = /^\d+(\.\d+)?$/;

function parseValue(key: UrlOptionKey, raw: string): number | boolean | 'group' {
  if (key === 'sync') {
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    if (raw === 'group') return 'group';
    throw errors.invalid(
      `openStore(file:): query parameter "sync" must be true, false, 1, 0 or group, got "${raw}"`,
    );
  }
  if (!DECIMAL.test(raw)) {
    throw errors.invalid(
      `openStore(file:): query parameter "${key}" must be a non-negative decimal number, got "${raw}"`,
    );
  }
  return Number(raw);
}

/**
 * The options named by `url`'s query parameters, parsed (numbers as decimals, `sync` as
 * `true`/`false`/`1`/`0`/`group`); their ranges are checked by `new FileStore` like the options
 * object's. Throws `invalid_argument` for an unknown parameter (naming it and listing the
 * known ones), a repeated one, an unparsable value, or one also given in `options`.
 */
export function optionsFromUrl(
  url: URL,
  options: Record<string, unknown> | undefined,
): Omit<FileStoreOptions, 'dir'> {
  const out: Omit<FileStoreOptions, 'dir'> = {};
  const seen = new Set<string>();
  for (const [key, raw] of url.searchParams) {
    if (!(URL_OPTION_KEYS as readonly string[]).includes(key)) {
      throw errors.invalid(
        `openStore(file:): unknown query parameter "${key}" (known: ${URL_OPTION_KEYS.join(', ')})`,
      );
    }
    if (seen.has(key)) {
      throw errors.invalid(`openStore(file:): query parameter "${key}" is given twice`);
    }
    seen.add(key);
    if (options && Object.hasOwn(options, key) && options[key] !== undefined) {
      throw errors.invalid(
        `openStore(file:): "${key}" is given both in the URL and in the options`,
      );
    }
    Object.defineProperty(out, key, {
      value: parseValue(key as UrlOptionKey, raw),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
