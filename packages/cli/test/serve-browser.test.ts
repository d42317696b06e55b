/// <reference lib="dom" />
// The viewer in a real headless Chromium, on a file store and on PostgreSQL: browsing from
// the list to a search, a session, a branch and back; a 20,000-message session; stored
// markup that must stay text; the message shapes of several frameworks; and the README's
// screenshot. One browser for every test; screenshots in test-artifacts/screenshots/ (with
// SESSIONKIT_UPDATE_SCREENSHOT=1, `pnpm --filter @sessionkit/cli screenshot`, the README's
// is also written to docs/serve.png).
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message } from '@sessionkit/core';
import { FileStore } from '@sessionkit/file';
import { openPostgresStore } from '@sessionkit/postgres';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewer } from '../src/serve/server.js';
import {
  chromiumAvailable,
  collectProblems,
  launchBrowser,
  screenshot,
} from './helpers/browser.js';
import { DEMO_TITLE, seedDemo } from './helpers/demo-session.js';
import {
  dropSchema,
  freshSchema,
  POSTGRES_URL,
  postgresAvailable,
  storeUrl,
} from './helpers/postgres.js';
import { type ServeProcess, startServe } from './helpers/serve.js';
import {
  BIG_SESSION_MESSAGES,
  ONERROR_TEXT,
  SCRIPT_TITLE,
  seedViewerStore,
  type ViewerSeed,
} from './helpers/serve-seed.js';

const hasBrowser = chromiumAvailable();
const work = mkdtempSync(join(tmpdir(), 'sk-cli-browser-'));
const schemas: string[] = [];
let browser: Browser;

beforeAll(async () => {
  if (hasBrowser) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  for (const s of schemas) await dropSchema(s);
  rmSync(work, { recursive: true, force: true });
});

/** A seeded store of one backend, by URL. */
interface Backend {
  name: string;
  available: boolean;
  seed(): Promise<{ url: string; ids: ViewerSeed }>;
}

const backends: Backend[] = [
  {
    name: 'file',
    available: hasBrowser,
    async seed() {
      const dir = join(work, 'store');
      const store = new FileStore({ dir, sync: false });
      const ids = await seedViewerStore(store);
      await store.close();
      return { url: `file:${dir}`, ids };
    },
  },
  {
    name: 'postgres',
    available: hasBrowser && postgresAvailable('the viewer browser tests on PostgreSQL need it'),
    async seed() {
      const schema = freshSchema();
      schemas.push(schema);
      const store = await openPostgresStore<Message>(POSTGRES_URL, { schema });
      const ids = await seedViewerStore(store);
      await store.close();
      return { url: storeUrl(schema), ids };
    },
  },
];

describe.each(backends)('the viewer in Chromium on $name', (backend) => {
  let serve: ServeProcess;
  let ids: ViewerSeed;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    if (!backend.available) return;
    const seeded = await backend.seed();
    ids = seeded.ids;
    serve = await startServe(['--store', seeded.url]);
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    problems = collectProblems(page);
  });
  afterAll(async () => {
    await page?.close();
    await serve?.stop();
  });

  const shot = (name: string, texts: string[]) =>
    screenshot(browser, page, `${backend.name}-${name}`, texts);
  const test = it.runIf(backend.available);

  test('list → search → session → branch → back', async () => {
    await page.goto(serve.url);
    await expect
      .poll(() => page.locator('table.sessions tbody tr').count())
      .toBeGreaterThanOrEqual(7);
    await shot('list', ['Sessions', 'Twenty thousand messages', 'Parser bug', '20,000']);

    await page.fill('input[name="q"]', 'TRIVIA tokens');
    await Promise.all([page.waitForURL(/q=TRIVIA/), page.click('form.filters button')]);
    const titles = await page.locator('table.sessions a.title').allInnerTexts();
    expect(titles.sort()).toEqual(['Doc comments', 'Parser bug', 'Trivia tokens']);
    await shot('search', ['Sessions matching “TRIVIA tokens”', 'Trivia tokens']);

    await Promise.all([
      page.waitForURL(`**/s/${ids.root}`),
      page.click('a.title >> text=Parser bug'),
    ]);
    await page.waitForSelector('#tree.loaded');
    const pair = page.locator('.tool-pair', { hasText: 'read_file' }).first();
    expect(await pair.locator('.tool-call').innerText()).toContain('src/lexer.ts');
    expect(await pair.locator('.tool-result').innerText()).toContain('skips comments');
    expect(await page.locator('#tree').innerText()).toMatch(
      /Trivia tokens.*merged into the parent/s,
    );
    expect(await page.locator('#tree').innerText()).toMatch(
      /Different approach.*the parent changed after the branch point/s,
    );
    await shot('session', [
      'Parser bug',
      'Why does the parser drop comments?',
      'BRANCH TREE',
      'team',
      'APP-12',
      'passed',
      'tool.run',
    ]);

    await Promise.all([
      page.waitForURL(`**/s/${ids.ahead}`),
      page.click('#tree a >> text=Doc comments'),
    ]);
    await page.waitForSelector('#tree.loaded');
    expect(await page.locator('.lineage').innerText()).toBe(`⎇ branch of ${ids.root} at message 6`);
    await shot('branch', [
      'Doc comments',
      'Also keep doc comments',
      '1 new message, can be merged',
    ]);

    await page.goBack();
    await page.waitForURL(`**/s/${ids.root}`);
    expect(await page.locator('h1').innerText()).toBe('Parser bug');
    expect(problems).toEqual([]);
  });

  test('a 20,000-message session opens at its last messages and loads earlier ones on demand', async () => {
    await page.goto(new URL(`/s/${ids.big}`, serve.url).href);
    const messages = page.locator('article.message');
    expect(await messages.count()).toBe(100);
    expect(await messages.last().innerText()).toContain(
      `message number ${BIG_SESSION_MESSAGES} of the long run`,
    );
    const before = page.url();
    await page.click('a.load-earlier');
    await expect.poll(() => messages.count()).toBe(200);
    expect(page.url()).toBe(before);
    expect(await messages.first().getAttribute('id')).toBe(`m${BIG_SESSION_MESSAGES - 200}`);
    await messages.first().scrollIntoViewIfNeeded();
    await shot('big-session', [
      'Twenty thousand messages',
      'message number 19801 of the long run',
      'Load 100 earlier messages',
    ]);
    expect(problems).toEqual([]);
  });

  test('shows stored markup as text and never runs it', async () => {
    await page.goto(new URL(`/?q=${encodeURIComponent('pwn attempt')}`, serve.url).href);
    expect(await page.locator('a.title').innerText()).toBe(SCRIPT_TITLE);
    await page.click('a.title');
    await page.waitForSelector('#tree.loaded');
    expect(await page.locator('h1').innerText()).toBe(SCRIPT_TITLE);
    expect(await page.locator('article.message pre.text').first().innerText()).toBe(ONERROR_TEXT);
    expect(await page.locator('img[src="x"], svg[onload], i[onmouseover]').count()).toBe(0);
    await page.hover('text=value');
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    await shot('markup-as-text', [
      '<script>window.__pwned = 1</script> Pwn attempt',
      '<img src=x onerror="window.__pwned = 2"> look at this',
      '<b>key</b>',
    ]);
    expect(problems).toEqual([]);
  });

  test('reads the message shapes of the AI SDK, Mastra and Anthropic, with images', async () => {
    await page.goto(new URL(`/s/${ids.shapes}`, serve.url).href);
    const weather = page.locator('.tool-pair', { hasText: 'weather' });
    expect(await weather.locator('.tool-result').innerText()).toContain('-3');
    const grep = page.locator('.tool-pair', { hasText: 'grep' });
    expect(await grep.locator('.tool-result').innerText()).toContain('src/a.ts:1: TODO');
    const image = page.locator('img.image');
    await expect
      .poll(() => image.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth))
      .toBe(1);
    await shot('shapes', ['It is -3 °C in Oslo.', 'Mastra says hello', 'Here is a picture']);
    expect(problems).toEqual([]);
  });
});

it.runIf(hasBrowser)('takes the README screenshot of a session page', async () => {
  const store = new FileStore({ dir: join(work, 'demo'), sync: false });
  const id = await seedDemo(store);
  const viewer = await startViewer({
    store,
    storeDisplay: 'file:~/.local/share/sessionkit/sessions',
    port: 0,
  });
  const page = await browser.newPage({
    viewport: { width: 1280, height: 860 },
    colorScheme: 'light',
  });
  try {
    const problems = collectProblems(page);
    await page.goto(viewer.url);
    await page.goto(new URL(`/s/${id}`, viewer.url).href);
    await page.waitForSelector('#tree.loaded');
    const file = await screenshot(browser, page, 'readme-serve', [
      DEMO_TITLE,
      'run_tests',
      'while (!done)',
      'merged into the parent',
      'the parent changed after the branch point',
      'API-311',
    ]);
    expect(problems).toEqual([]);
    if (process.env.SESSIONKIT_UPDATE_SCREENSHOT === '1') {
      copyFileSync(file, fileURLToPath(new URL('../docs/serve.png', import.meta.url)));
    }
  } finally {
    await page.close();
    await viewer.close();
    await store.close();
  }
});
