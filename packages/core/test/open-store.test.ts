import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import type { Store } from '../src/contracts.js';
import { isSessionKitError, type SessionKitError } from '../src/errors.js';
import {
  openStore,
  redactUrl,
  registerStoreAdapter,
  type StoreAdapter,
} from '../src/open-store.js';
import type { Message } from '../src/types.js';

// A stand-in store: openStore only passes it through.
const fakeStore = (label: string): Store<Message> & { label: string } => ({
  label,
  create: async () => {
    throw new Error('unused');
  },
  load: async () => {
    throw new Error('unused');
  },
  save: async () => {
    throw new Error('unused');
  },
  delete: async () => {},
  list: async () => [],
  close: async () => {},
});

async function failure(p: Promise<unknown>): Promise<SessionKitError> {
  try {
    await p;
  } catch (e) {
    if (isSessionKitError(e)) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

/** Everything an error would show in a log: message, stack, cause chain, own props. */
const everythingIn = (e: unknown) => `${inspect(e, { depth: 10, showHidden: true })}`;

describe('registerStoreAdapter + openStore', () => {
  it('dispatches on the scheme, case-insensitively, passing the URL and options', async () => {
    const calls: { url: URL; options: unknown }[] = [];
    registerStoreAdapter({
      schemes: ['testa', 'TestA2:'],
      open: async (url, options) => {
        calls.push({ url, options });
        return fakeStore(url.protocol);
      },
    });
    const s1 = (await openStore('testa://host/path?x=1', { pool: 3 })) as unknown as {
      label: string;
    };
    const s2 = (await openStore('TESTA2:some/where')) as unknown as { label: string };
    expect(s1.label).toBe('testa:');
    expect(s2.label).toBe('testa2:');
    expect(calls[0]!.url).toBeInstanceOf(URL);
    expect(calls[0]!.url.host).toBe('host');
    expect(calls[0]!.url.searchParams.get('x')).toBe('1');
    expect(calls[0]!.options).toEqual({ pool: 3 });
    expect(calls[1]!.options).toBeUndefined();
  });

  it('passes the URL as written, since parsing loses relative file paths', async () => {
    const seen: (string | undefined)[] = [];
    registerStoreAdapter({
      schemes: ['testsrc'],
      open: async (url, _options, source) => {
        seen.push(source);
        return fakeStore(url.href);
      },
    });
    const s = (await openStore('testsrc:./rel/dir?x=1')) as unknown as { label: string };
    expect(s.label).toBe('testsrc:./rel/dir?x=1');
    expect(seen).toEqual(['testsrc:./rel/dir?x=1']);
  });

  it('lets a later registration replace an earlier one', async () => {
    registerStoreAdapter({ schemes: ['testb'], open: async () => fakeStore('first') });
    registerStoreAdapter({ schemes: ['testb'], open: async () => fakeStore('second') });
    expect(((await openStore('testb:x')) as unknown as { label: string }).label).toBe('second');
  });

  it('rejects a malformed adapter', () => {
    for (const bad of [
      null,
      {},
      { schemes: 'x', open: async () => fakeStore('x') },
      { schemes: [] },
    ]) {
      try {
        registerStoreAdapter(bad as never);
        expect.unreachable();
      } catch (e) {
        expect(isSessionKitError(e, 'invalid_argument')).toBe(true);
      }
    }
  });

  it('passes the adapter’s own errors through', async () => {
    const boom = new Error('cannot connect');
    registerStoreAdapter({
      schemes: ['testc'],
      open: async () => {
        throw boom;
      },
    });
    await expect(openStore('testc://x')).rejects.toBe(boom);
  });
});

describe('the adapter registry is shared by every copy of core', () => {
  const KEY = Symbol.for('sessionkit.openStore.registry.v1');
  const slot = () =>
    (globalThis as unknown as Record<symbol, { adapters: Map<string, StoreAdapter> }>)[KEY];

  it('keeps registrations on the global Symbol.for slot', async () => {
    const adapter: StoreAdapter = { schemes: ['testg'], open: async () => fakeStore('g') };
    registerStoreAdapter(adapter);
    expect(slot()?.adapters).toBeInstanceOf(Map);
    expect(slot()!.adapters.get('testg')).toBe(adapter);

    // What another copy of core registers lands in the same slot; this copy opens it.
    const other: StoreAdapter = { schemes: ['testh'], open: async () => fakeStore('from slot') };
    slot()!.adapters.set('testh', other);
    expect(((await openStore('testh:x')) as unknown as { label: string }).label).toBe('from slot');
  });

  it('lets a second module copy see and add registrations', async () => {
    registerStoreAdapter({ schemes: ['testi'], open: async () => fakeStore('first copy') });
    vi.resetModules();
    const copy = (await import('../src/open-store.js')) as typeof import('../src/open-store.js');
    expect(copy.openStore).not.toBe(openStore); // really a second instance
    // The second copy opens what the first registered …
    expect(((await copy.openStore('testi:x')) as unknown as { label: string }).label).toBe(
      'first copy',
    );
    // … and the first copy opens what the second registers.
    copy.registerStoreAdapter({ schemes: ['testj'], open: async () => fakeStore('second copy') });
    expect(((await openStore('testj:x')) as unknown as { label: string }).label).toBe(
      'second copy',
    );
  });
});

describe('openStore failures', () => {
  it('rejects an unknown scheme with invalid_argument listing the known ones', async () => {
    const e = await failure(openStore('nosuchdb://host/x'));
    expect(e.code).toBe('invalid_argument');
    expect(e.message).toContain('"nosuchdb:"');
    expect(e.message).toContain('postgres');
    expect(e.message).toContain('registerStoreAdapter');
  });

  it('rejects empty, scheme-less and non-string URLs', async () => {
    for (const url of ['', './sessions', '/abs/path', 42, undefined]) {
      const e = await failure(openStore(url as string));
      expect(e.code, String(url)).toBe('invalid_argument');
    }
  });

  it('names the package to install when a first-party adapter is missing', () => {
    // A plain Node process with core's build and nothing else: neither core's location nor
    // the working directory (an empty folder) has an adapter installed. (In this workspace
    // vitest's resolver would find the adapters, so this runs outside it.)
    const coreEntry = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url)));
    const cwd = mkdtempSync(join(tmpdir(), 'sk-open-store-'));
    try {
      const script = `const { openStore } = await import(${JSON.stringify(coreEntry.href)});
        for (const url of ['redis://127.0.0.1:6379', 'S3://bucket/prefix']) {
          try { await openStore(url); console.log('opened'); }
          catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }
        }`;
      // A clean environment: the test worker's (its IPC channel, loader flags) would keep the child alive.
      const env = { PATH: process.env.PATH ?? '' };
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd,
        env,
        encoding: 'utf8',
        timeout: 30_000,
      });
      const [redis, s3] = r.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(redis.code).toBe('invalid_argument');
      expect(redis.message).toContain('npm install @sessionkit/redis ioredis');
      expect(s3.code).toBe('invalid_argument');
      expect(s3.message).toContain('npm install @sessionkit/s3 @aws-sdk/client-s3');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('never shows a password, in the message or anywhere in the error', async () => {
    // Schemes no adapter registers, so core's own errors are what is checked (adapters
    // that are installed test their own errors).
    const urls = [
      'nosuchdb://u:secret@h/db',
      'nosuchdb://user:secret@db.example.com:5432/app?sslmode=require',
      // Not parseable (bad port): redacted by the fallback, and the parser's error
      // (which quotes its input) must not be kept as the cause. Fails before any adapter.
      'postgres://u:secret@h:notaport/db',
      // A secret in the query string, as libpq and others accept it.
      'nosuchdb://h/db?password=secret&sslmode=require',
    ];
    for (const url of urls) {
      const e = await failure(openStore(url));
      expect(e.code, url).toBe('invalid_argument');
      expect(everythingIn(e), url).not.toContain('secret');
    }
  });
});

describe('redactUrl', () => {
  it('masks passwords and secret query parameters, keeping the rest', () => {
    expect(redactUrl('postgres://u:secret@h/db')).toBe('postgres://u:***@h/db');
    expect(redactUrl('redis://:secret@127.0.0.1:6379/0')).toBe('redis://:***@127.0.0.1:6379/0');
    expect(redactUrl('postgres://u@h/db')).toBe('postgres://u@h/db');
    expect(redactUrl('file:./sessions')).toBe('file:./sessions');
    const q = redactUrl('postgres://h/db?sslmode=require&password=secret&PWD=secret2');
    expect(q).not.toContain('secret');
    expect(q).toContain('sslmode=require');
  });

  it('masks credentials of URLs it cannot parse', () => {
    for (const url of ['postgres://u:secret@h:bad/db', 'postgres://u:se/cret@h/db']) {
      const r = redactUrl(url);
      expect(r, url).not.toContain('secret');
      expect(r, url).not.toContain('cret');
      expect(r.startsWith('postgres://')).toBe(true);
    }
  });
});

describe('knownAdapterPackage', () => {
  it('names the package and install line of every first-party scheme, any case, colon or not', async () => {
    const { knownAdapterPackage } = await import('../src/adapter.js');
    expect(knownAdapterPackage('postgres')).toEqual({
      pkg: '@sessionkit/postgres',
      install: '@sessionkit/postgres pg',
    });
    expect(knownAdapterPackage('REDISS:')?.pkg).toBe('@sessionkit/redis');
    expect(knownAdapterPackage('s3')?.install).toBe('@sessionkit/s3 @aws-sdk/client-s3');
    expect(knownAdapterPackage('ftp')).toBeUndefined();
    // Inherited object keys are not schemes.
    expect(knownAdapterPackage('constructor')).toBeUndefined();
    expect(knownAdapterPackage('__proto__')).toBeUndefined();
  });

  it('openStore refuses an inherited-key scheme as unknown, not as a broken package', async () => {
    await expect(openStore('constructor://x')).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('no adapter handles "constructor:" URLs'),
    });
  });
});
