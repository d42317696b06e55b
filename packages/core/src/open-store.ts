import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Store } from './contracts.js';
import { errorsFor } from './errors.js';
import type { Message } from './types.js';

const errors = errorsFor('core');

/**
 * What an adapter package exports as `storeAdapter` so `openStore` can open its URLs.
 * `open` receives the parsed URL and the caller's options and returns an owned store.
 */
export interface StoreAdapter {
  /** URL schemes without the colon, e.g. `["postgres", "postgresql"]`. */
  schemes: readonly string[];
  /**
   * Opens a store that owns its connections (its `close()` releases them). `source` is
   * the URL exactly as the caller wrote it: WHATWG parsing turns `file:./x` into
   * `file:///x`, so adapters that accept relative paths read them from here.
   */
  open(url: URL, options?: Record<string, unknown>, source?: string): Promise<Store<Message>>;
}

/** A first-party adapter package and the npm install line its URLs need. */
export interface KnownAdapterPackage {
  /** The package that exports the scheme's `storeAdapter`, e.g. `@sessionkit/postgres`. */
  pkg: string;
  /** What to install for it, driver included, e.g. `@sessionkit/postgres pg`. */
  install: string;
}

// First-party schemes: the package `openStore` loads on demand, and what to install.
const KNOWN_SCHEMES: Record<string, KnownAdapterPackage> = {
  memory: { pkg: '@sessionkit/memory', install: '@sessionkit/memory' },
  file: { pkg: '@sessionkit/file', install: '@sessionkit/file' },
  postgres: { pkg: '@sessionkit/postgres', install: '@sessionkit/postgres pg' },
  postgresql: { pkg: '@sessionkit/postgres', install: '@sessionkit/postgres pg' },
  redis: { pkg: '@sessionkit/redis', install: '@sessionkit/redis ioredis' },
  rediss: { pkg: '@sessionkit/redis', install: '@sessionkit/redis ioredis' },
  s3: { pkg: '@sessionkit/s3', install: '@sessionkit/s3 @aws-sdk/client-s3' },
};

/**
 * The first-party adapter package of a URL scheme (`"postgres"`, with or without the
 * colon, any case), or `undefined` for a scheme sessionkit does not ship. For tools that
 * load adapters from their own location before calling `openStore` (the `sessionkit`
 * command does). Never throws.
 */
export function knownAdapterPackage(scheme: string): KnownAdapterPackage | undefined {
  const key = String(scheme).toLowerCase().replace(/:$/, '');
  return Object.hasOwn(KNOWN_SCHEMES, key) ? { ...KNOWN_SCHEMES[key]! } : undefined;
}

/** What the global registry slot holds. Bump the key's version if this shape changes. */
interface AdapterRegistry {
  /** Scheme (lower case, no colon) → adapter. */
  adapters: Map<string, StoreAdapter>;
}

// One registry per process, not per module copy: an application can end up with two
// copies of core (an adapter bundling its own, or an ESM and a CJS build), and an adapter
// registered through one copy must be found by `openStore` of the other. The registry
// lives on a global slot under a `Symbol.for` key, as the file lock's does.
const REGISTRY_KEY = Symbol.for('sessionkit.openStore.registry.v1');

function adapterRegistry(): AdapterRegistry {
  const slots = globalThis as unknown as Record<symbol, unknown>;
  const existing = slots[REGISTRY_KEY] as Partial<AdapterRegistry> | undefined;
  if (existing?.adapters instanceof Map) return existing as AdapterRegistry;
  const fresh: AdapterRegistry = { adapters: new Map() };
  slots[REGISTRY_KEY] = fresh;
  return fresh;
}

const registered = adapterRegistry().adapters;

/**
 * Registers an adapter for its URL schemes (a third-party adapter, or a first-party one
 * an application bundles). Later registrations of a scheme replace earlier ones. The
 * registry is shared by every copy of `@sessionkit/core` loaded in the process.
 */
export function registerStoreAdapter(adapter: StoreAdapter): void {
  if (!adapter || !Array.isArray(adapter.schemes) || typeof adapter.open !== 'function') {
    throw errors.invalid(
      'registerStoreAdapter: expected { schemes: string[], open(url, options) }',
    );
  }
  for (const scheme of adapter.schemes)
    registered.set(scheme.toLowerCase().replace(/:$/, ''), adapter);
}

function isModuleNotFound(e: unknown, pkg: string): boolean {
  const err = e as { code?: unknown; message?: unknown };
  const code = err?.code;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof err.message === 'string' &&
    err.message.includes(pkg)
  );
}

// Loads the adapter from core's own location first, then from the application's
// working directory (where the app installed it when core sits in another tree).
async function importAdapterPackage(pkg: string): Promise<unknown | undefined> {
  try {
    return await import(pkg);
  } catch (e) {
    if (!isModuleNotFound(e, pkg)) throw e;
  }
  try {
    const resolved = createRequire(join(process.cwd(), 'package.json')).resolve(pkg);
    return await import(pathToFileURL(resolved).href);
  } catch (e) {
    if (isModuleNotFound(e, pkg)) return undefined;
    throw e;
  }
}

// Query parameters that carry credentials in common connection strings (libpq, S3, tokens).
const SECRET_PARAMS =
  /([?&;])(password|passwd|pass|pwd|sslpassword|secret|client_secret|token|access_token|auth_token|auth|api_key|apikey|secret_access_key|aws_secret_access_key|session_token|x-amz-security-token)=([^&;#]*)/gi;

/**
 * Removes credentials from a URL before it appears in an error message: the password of
 * the user info (`u:***@`) and the values of secret query parameters (`password=***`).
 * Works on strings `URL` cannot parse too, and leaves everything else as written.
 */
export function redactUrl(url: string): string {
  // Up to the last "@": an unencoded "/" or "@" inside a password must not end the match
  // early and leave the rest of the secret visible.
  let out = url.replace(
    /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)(.*)@/,
    (_m, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      return colon < 0 ? `${scheme}${userinfo}@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
    },
  );
  out = out.replace(SECRET_PARAMS, (_m, sep: string, key: string) => `${sep}${key}=***`);
  return out;
}

/**
 * Opens a store from a URL: `memory:`, `file:./sessions`, `postgres://…`, `redis://…`,
 * `s3://bucket/prefix`, or any scheme a registered adapter claims. First-party adapter
 * packages are loaded on demand. The store owns its connections: call `close()`.
 *
 * Throws `invalid_argument` for a malformed URL, an unknown scheme, or a missing
 * adapter package (the message names the package to install).
 */
export async function openStore<M = Message>(
  url: string,
  options?: Record<string, unknown>,
): Promise<Store<M>> {
  if (typeof url !== 'string' || url === '')
    throw errors.invalid('openStore: url must be a non-empty string');
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  if (!match)
    throw errors.invalid(`openStore: "${redactUrl(url)}" has no scheme (try file:./sessions)`);
  const scheme = match[1]!.toLowerCase();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // No cause: the parser's error quotes the whole input, password included.
    throw errors.invalid(`openStore: "${redactUrl(url)}" is not a valid URL`);
  }
  let adapter = registered.get(scheme);
  if (!adapter) {
    const known = knownAdapterPackage(scheme);
    if (!known) {
      throw errors.invalid(
        `openStore: no adapter handles "${scheme}:" URLs (known: ${Object.keys(KNOWN_SCHEMES).join(', ')}; register others with registerStoreAdapter)`,
      );
    }
    const mod = (await importAdapterPackage(known.pkg)) as
      | { storeAdapter?: StoreAdapter }
      | undefined;
    if (!mod) {
      throw errors.invalid(
        `openStore: "${scheme}:" URLs need the ${known.pkg} package, which is not installed — run: npm install ${known.install}`,
      );
    }
    if (!mod.storeAdapter || typeof mod.storeAdapter.open !== 'function') {
      throw errors.invalid(
        `openStore: ${known.pkg} does not export a storeAdapter (version mismatch?)`,
      );
    }
    adapter = mod.storeAdapter;
    registerStoreAdapter(adapter);
  }
  return (await adapter.open(parsed, options, url)) as unknown as Store<M>;
}
