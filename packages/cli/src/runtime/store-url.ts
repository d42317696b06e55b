import { pathToFileURL } from 'node:url';
import { redactUrl } from '@sessionkit/core';
import { defaultFileStoreDir } from '@sessionkit/file';
import { usageError } from './cli-error.js';

/** The environment variable that picks the store when `--store` is not given. */
export const STORE_URL_ENV = 'SESSIONKIT_STORE_URL';

/**
 * The store URL a command uses: `--store`, else `$SESSIONKIT_STORE_URL`, else the file
 * store at its default location (`defaultFileStoreDir()`, e.g.
 * `~/.local/share/sessionkit/sessions`).
 */
export function chooseStoreUrl(option: string | undefined, env = process.env): string {
  if (option !== undefined && option !== '') return option;
  const fromEnv = env[STORE_URL_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return pathToFileURL(defaultFileStoreDir(env)).href;
}

/**
 * The lower-case scheme of `url` after checking that it is a URL at all. Throws a usage
 * error (exit 2) naming the URL without credentials.
 */
export function schemeOf(url: string): string {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  if (!match || /^[a-zA-Z]:[\\/]/.test(url)) {
    throw usageError(
      `"${redactUrl(url)}" is not a store URL — use file:./sessions, postgres://user@host/db, memory: …`,
    );
  }
  try {
    new URL(url);
  } catch {
    throw usageError(`"${redactUrl(url)}" is not a valid URL — check its spelling and escaping`);
  }
  return match[1]!.toLowerCase();
}
