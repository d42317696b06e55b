// The viewer's own static files (stylesheet, page script, icon), read once at start and
// served from memory under versioned URLs, so a page never needs anything from outside
// the process and a browser may cache them for good.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/** One static file ready to serve. */
export interface Asset {
  body: Buffer;
  contentType: string;
  /** A content hash: the `?v=` of its URL and its ETag. */
  version: string;
}

const FILES: Record<string, string> = {
  'viewer.css': 'text/css; charset=utf-8',
  'viewer.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/** The static files by name, and each one's versioned URL. */
export interface Assets {
  get(name: string): Asset | undefined;
  /** `/assets/<name>?v=<hash>`. */
  href(name: string): string;
}

/**
 * Reads the static files from the `assets` folder beside this module (`src/serve/assets`,
 * copied to `dist/serve/assets` by the build). Throws when one is missing (a broken
 * install), naming it.
 */
export async function loadAssets(): Promise<Assets> {
  const byName = new Map<string, Asset>();
  for (const [name, contentType] of Object.entries(FILES)) {
    const url = new URL(`./assets/${name}`, import.meta.url);
    const body = await readFile(url).catch((e: unknown) => {
      throw new Error(
        `the viewer's file ${name} is missing (${String(e)}) — reinstall @sessionkit/cli`,
        { cause: e },
      );
    });
    const version = createHash('sha256').update(body).digest('hex').slice(0, 16);
    byName.set(name, { body, contentType, version });
  }
  return {
    get: (name) => byName.get(name),
    href: (name) => `/assets/${name}?v=${byName.get(name)?.version ?? ''}`,
  };
}
