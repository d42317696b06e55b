// Finds the adapter package for a store URL's scheme. Core's openStore imports adapters
// from core's own location and from the working directory; an installed command has its
// adapters beside itself, so they are looked up from here first and registered with core.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  knownAdapterPackage,
  registerStoreAdapter,
  type StoreAdapter,
} from '@sessionkit/core/adapter';
import { CliError } from './cli-error.js';

/** A loaded adapter package: its exports (for version constants) and its name. */
export interface LoadedAdapter {
  pkg: string;
  version: string | undefined;
  exports: Record<string, unknown>;
}

function missingModuleName(e: unknown): string | undefined {
  const err = e as { code?: unknown; message?: unknown };
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'MODULE_NOT_FOUND') return undefined;
  const m = /(?:package|module) '([^']+)'/i.exec(String(err.message));
  return m?.[1] ?? 'a module';
}

function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** The entry of `pkg` as seen from this command, then from the working directory. */
function resolveEntry(pkg: string): string | undefined {
  for (const base of [import.meta.url, join(process.cwd(), 'package.json')]) {
    try {
      return createRequire(base).resolve(pkg);
    } catch {
      // not installed there
    }
  }
  return undefined;
}

function versionOf(pkg: string): string | undefined {
  for (const base of [import.meta.url, join(process.cwd(), 'package.json')]) {
    try {
      return (createRequire(base)(`${pkg}/package.json`) as { version?: string }).version;
    } catch {
      // not resolvable from there
    }
  }
  return undefined;
}

/**
 * Loads and registers the first-party adapter of `scheme` (a no-op returning undefined
 * for schemes the command does not know: a registered third-party adapter may claim
 * them). Throws a `CliError` (exit 1) naming what to install when the package, or a
 * driver it needs, is missing.
 */
export async function loadAdapter(scheme: string): Promise<LoadedAdapter | undefined> {
  const known = knownAdapterPackage(scheme);
  if (!known) return undefined;
  const entry = resolveEntry(known.pkg);
  if (entry === undefined) {
    throw new CliError(
      `"${scheme}:" stores need the ${known.pkg} package, which is not installed — run: npm install ${known.install}`,
    );
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
  } catch (e) {
    const missing = missingModuleName(e);
    if (missing === undefined) throw e;
    const name = packageNameOf(missing);
    throw new CliError(
      `${known.pkg} cannot load: ${name} is not installed — run: npm install ${known.install}`,
      undefined,
      { cause: e },
    );
  }
  const adapter = mod.storeAdapter as StoreAdapter | undefined;
  if (!adapter || typeof adapter.open !== 'function') {
    throw new CliError(
      `${known.pkg} does not export a storeAdapter (version mismatch?) — install a version that matches @sessionkit/core`,
    );
  }
  registerStoreAdapter(adapter);
  return { pkg: known.pkg, version: versionOf(known.pkg), exports: mod };
}
