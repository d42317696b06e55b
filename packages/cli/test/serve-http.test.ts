// The viewer over HTTP, in process (`startViewer`) on a memory store whose calls are
// counted: what each page reads from the store, the read-only and access rules, the
// security headers, images and errors.
import type { Store } from '@sessionkit/core';
import { MemoryStore } from '@sessionkit/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer, type Viewer } from '../src/serve/server.js';
import { request } from './helpers/serve.js';
import {
  BIG_SESSION_MESSAGES,
  PNG_1X1,
  SCRIPT_TITLE,
  seedViewerStore,
  type ViewerSeed,
} from './helpers/serve-seed.js';

/** `store` with every call counted, and the number of messages its reads returned. */
function counted(store: Store) {
  const calls = new Map<string, number>();
  let messagesRead = 0;
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return async (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        const out = (await value.apply(target, args)) as { messages?: unknown[] } | unknown[];
        if (Array.isArray(out) && key === 'loadMessages') messagesRead += out.length;
        else if (!Array.isArray(out) && Array.isArray(out?.messages))
          messagesRead += out.messages.length;
        return out;
      };
    },
  });
  return {
    store: proxy,
    calls: (name: string) => calls.get(name) ?? 0,
    messagesRead: () => messagesRead,
    reset: () => {
      calls.clear();
      messagesRead = 0;
    },
  };
}

const memory = new MemoryStore();
const probe = counted(memory as unknown as Store);
let ids: ViewerSeed;
let viewer: Viewer;

beforeAll(async () => {
  ids = await seedViewerStore(memory as unknown as Store);
  viewer = await startViewer({ store: probe.store, storeDisplay: 'memory:', port: 0 });
});
afterAll(async () => {
  await viewer.close();
  await memory.close();
});

const get = (path: string, headers?: Record<string, string>) =>
  request(new URL(path, viewer.url).href, headers ? { headers } : {});

describe('what pages read', () => {
  it('the list reads one page of summaries and no message', async () => {
    probe.reset();
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(probe.calls('list')).toBe(1);
    expect(
      probe.calls('load') + probe.calls('loadMessages') + probe.calls('loadMessageWindow'),
    ).toBe(0);
    expect(page.body).toContain('Twenty thousand messages');
    expect(page.body).toContain('20,000');
    expect(page.headers['server-timing']).toMatch(
      /^store;dur=[\d.]+;desc="1 calls", total;dur=[\d.]+$/,
    );
  });

  it('a search is one list({ query }) call', async () => {
    probe.reset();
    const page = await get('/?q=TRIVIA+TOKENS');
    expect(probe.calls('list')).toBe(1);
    expect(page.body).toContain('Trivia tokens');
    expect(page.body).not.toContain('Twenty thousand messages');
  });

  it('a 20,000-message session opens from the list with one window and no full load', async () => {
    await get('/');
    probe.reset();
    const page = await get(`/s/${ids.big}`);
    expect(page.status).toBe(200);
    expect(probe.calls('load')).toBe(0);
    // Its summary, at the position the list showed; it has no branches to list.
    expect(probe.calls('list')).toBe(1);
    expect(probe.messagesRead()).toBe(100);
    expect(page.body).toContain(`message number ${BIG_SESSION_MESSAGES} of the long run`);
    expect(page.body).not.toContain(`message number ${BIG_SESSION_MESSAGES - 100} of the long run`);
    expect(page.body.match(/<article class="message/g)).toHaveLength(100);
    expect(page.body).toContain(`href="/s/${ids.big}?offset=19800&amp;limit=100"`);

    probe.reset();
    const earlier = await get(`/s/${ids.big}?offset=19800&limit=100&part=messages`);
    expect(probe.calls('load')).toBe(0);
    expect(probe.messagesRead()).toBe(100);
    expect(earlier.body.startsWith('<div class="window" data-offset="19800"')).toBe(true);
    expect(earlier.body).toContain('message number 19801 of the long run');
    expect(earlier.body).not.toContain('<html');
  });

  it('finds a session written to since it was listed among the sessions that moved, without a load', async () => {
    await get('/');
    await memory.commit(ids.scriptTitle, {
      append: [{ role: 'user', content: 'one more question' }],
    });
    probe.reset();
    const page = await get(`/s/${ids.scriptTitle}`);
    expect(page.status).toBe(200);
    expect(probe.calls('load')).toBe(0);
    expect(page.body).toContain('one more question');
    expect(page.body).toContain('messages <b>3</b>');
  });

  it('a permalink the viewer has never listed reads the session once, then from its position', async () => {
    const fresh = await startViewer({ store: probe.store, port: 0 });
    try {
      probe.reset();
      const first = await request(new URL(`/s/${ids.shapes}`, fresh.url).href);
      expect(first.status).toBe(200);
      expect(probe.calls('load')).toBe(1);
      probe.reset();
      await request(new URL(`/s/${ids.shapes}`, fresh.url).href);
      expect(probe.calls('load')).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  it('the branch tree shows every branch with its branch point and merge state', async () => {
    const tree = await get(`/s/${ids.ahead}/tree?part=tree`);
    expect(tree.status).toBe(200);
    expect(tree.body).not.toContain('<html');
    for (const [id, state] of [
      [ids.merged, 'merged into the parent'],
      [ids.diverged, 'the parent changed after the branch point'],
      [ids.ahead, '1 new message, can be merged'],
    ] as const) {
      const node = tree.body.slice(tree.body.indexOf(`href="/s/${id}"`));
      expect(node.slice(0, node.indexOf('</li>')), id).toContain(state);
    }
    expect(tree.body).toMatch(
      new RegExp(`<li class="current"><span class="node"><a href="/s/${ids.ahead}"`),
    );
  });
});

describe('read-only and safe', () => {
  it('refuses every method but GET with 405, and writes nothing', async () => {
    const before = (await memory.list({ limit: 1000, includeArchived: true })).map((s) => [
      s.id,
      s.revision,
    ]);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
      const answer = await request(new URL(`/s/${ids.root}`, viewer.url).href, { method });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.allow, method).toBe('GET');
      expect(answer.headers['content-security-policy'], method).toContain("default-src 'none'");
    }
    const after = (await memory.list({ limit: 1000, includeArchived: true })).map((s) => [
      s.id,
      s.revision,
    ]);
    expect(after).toEqual(before);
  });

  it('answers only its own Host (DNS rebinding)', async () => {
    const port = new URL(viewer.url).port;
    expect((await get('/', { Host: `evil.example:${port}` })).status).toBe(403);
    expect((await get('/', { Host: `localhost:${port}` })).status).toBe(200);
  });

  it('sends a strict CSP and the security headers on pages, files and errors', async () => {
    for (const path of [
      '/',
      `/s/${ids.root}`,
      '/assets/viewer.js',
      '/s/nope',
      '/s/..%2F',
      '/?after=bad',
    ]) {
      const answer = await get(path);
      const csp = String(answer.headers['content-security-policy']);
      expect(csp, path).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types sessionkit-viewer",
      );
      expect(answer.headers['x-content-type-options'], path).toBe('nosniff');
      expect(answer.headers['referrer-policy'], path).toBe('no-referrer');
      expect(answer.headers['x-frame-options'], path).toBe('DENY');
    }
  });

  it('escapes stored strings: no markup from a title, a message or metadata', async () => {
    const page = await get(`/s/${ids.scriptTitle}`);
    expect(page.body).not.toMatch(/<script>window|<img src=x|<svg onload|<i onmouseover|<b>key/);
    expect(page.body).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt; Pwn attempt');
    expect(page.body).toContain('&lt;img src=x onerror=&quot;window.__pwned = 2&quot;&gt;');
    const list = await get(`/?q=${encodeURIComponent('pwn attempt')}`);
    expect(list.body).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
    expect(list.body).not.toContain(SCRIPT_TITLE);
    // The only script element of any page is the viewer's own file.
    expect(page.body.match(/<script/g)).toHaveLength(1);
  });

  it('serves stored images by their bytes, and refuses what is not a raster image', async () => {
    const png = await get(`/s/${ids.shapes}/messages/3/images/0`);
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.bytes.equals(Buffer.from(PNG_1X1, 'base64'))).toBe(true);
    await memory.create({
      id: 'svg-image',
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'image',
              mediaType: 'image/png',
              data: Buffer.from('<svg onload="alert(1)"/>').toString('base64'),
            },
          ],
        },
      ],
    });
    expect((await get('/s/svg-image/messages/0/images/0')).status).toBe(415);
    expect((await get('/s/svg-image/messages/0/images/1')).status).toBe(404);
  });

  it('answers clear errors: 404 for a missing session or page, 400 for a bad parameter', async () => {
    const missing = await get('/s/no-such-session');
    expect(missing.status).toBe(404);
    expect(missing.body).toContain('no-such-session');
    expect((await get('/nowhere')).status).toBe(404);
    const bad = await get(`/s/${ids.root}?offset=-1`);
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('offset must be an integer from 0 to');
    expect((await get('/?after=yesterday')).status).toBe(400);
    expect((await get(`/s/${ids.root}/messages/99`)).status).toBe(404);
  });
});

describe('access token', () => {
  it('is generated for a non-loopback host and required on every request', async () => {
    const open = await startViewer({ store: probe.store, host: '0.0.0.0', port: 0 });
    try {
      expect(open.token).toMatch(/^[\w-]{32}$/);
      expect(open.openUrl).toBe(`${open.url}?token=${open.token}`);
      const at = (path: string) => `http://127.0.0.1:${open.port}${path}`;
      expect((await request(at('/'))).status).toBe(401);
      expect((await request(at('/assets/viewer.css'))).status).toBe(401);
      expect((await request(at('/?token=wrong'))).status).toBe(401);
      const visit = await request(at(`/s/${ids.root}?offset=0&token=${open.token}`));
      expect(visit.status).toBe(303);
      expect(visit.headers.location).toBe(`/s/${ids.root}?offset=0`);
      const cookie = String(visit.headers['set-cookie']);
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      const sneaky = await request(at(`/.//evil.example/?token=${open.token}`));
      expect(sneaky.status).toBe(303);
      expect(String(sneaky.headers.location)).toMatch(/^\/(?!\/)/);
      const pair = cookie.split(';')[0] ?? '';
      expect((await request(at('/'), { headers: { Cookie: pair } })).status).toBe(200);
      expect(
        (await request(at('/'), { headers: { Authorization: `Bearer ${open.token}` } })).status,
      ).toBe(200);
      expect((await request(at('/'), { headers: { Cookie: `${pair}x` } })).status).toBe(401);
    } finally {
      await open.close();
    }
  });
});
