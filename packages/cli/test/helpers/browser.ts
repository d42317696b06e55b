/// <reference lib="dom" />
// One headless Chromium for the browser tests: Debian's `chromium` (never a downloaded
// build), driven by playwright-core. Screenshots are kept in test-artifacts/ (ignored by
// git) and checked: the page's text at that moment, and an image that is not blank.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** The browser binary (`apt-get install chromium`; `.ci/run` installs it when missing). */
export const CHROMIUM = process.env.SESSIONKIT_TEST_CHROMIUM || '/usr/bin/chromium';

const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/**
 * True when the browser is installed. Under CI a missing browser fails the file (with how
 * to install it); elsewhere it warns loudly and the caller skips.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `[sessionkit/cli tests] ${CHROMIUM} is missing; the viewer's browser tests need it. Install it with: apt-get install -y chromium (or set SESSIONKIT_TEST_CHROMIUM).`;
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPED: ${message}\n`);
  return false;
}

/** Where screenshots are kept. */
export const SCREENSHOTS = fileURLToPath(
  new URL('../../test-artifacts/screenshots/', import.meta.url),
);

/**
 * Starts Chromium headless, with nothing that reaches the network on its own. Playwright
 * gives each launch a fresh temporary profile (`--user-data-dir`) and removes it on close.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Page errors, failed requests and console errors (CSP violations are reported there). */
export function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('requestfailed', (r) => {
    // Chromium cancels every request still in flight when the page navigates on (the
    // favicon, a session's tree part loading after its messages): net::ERR_ABORTED is
    // the browser's choice, not a failure of the server. A part the viewer needed and
    // never got fails the test's own checks of what the page shows.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  return problems;
}

/** Width, height and colour spread of a PNG, measured by the browser on a blank page. */
async function pngStats(browser: Browser, png: Buffer) {
  const probe = await browser.newPage();
  try {
    return await probe.evaluate(
      async (dataUrl) => {
        const img = new Image();
        img.src = dataUrl;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.naturalWidth;
        canvas.height = img.naturalHeight;
        const g = canvas.getContext('2d');
        if (!g) throw new Error('no 2d context');
        g.drawImage(img, 0, 0);
        const { data } = g.getImageData(0, 0, canvas.width, canvas.height);
        const counts = new Map<number, number>();
        for (let i = 0; i < data.length; i += 4) {
          const key = ((data[i] ?? 0) << 16) | ((data[i + 1] ?? 0) << 8) | (data[i + 2] ?? 0);
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        const pixels = data.length / 4;
        return {
          width: img.naturalWidth,
          height: img.naturalHeight,
          colours: counts.size,
          commonest: Math.max(...counts.values()) / pixels,
        };
      },
      `data:image/png;base64,${png.toString('base64')}`,
    );
  } finally {
    await probe.close();
  }
}

/**
 * Saves a screenshot of `page` as `<name>.png` after checking that the page shows every
 * one of `texts` at that moment; then checks the image: the viewport's size, many
 * colours, and no single colour covering nearly all of it.
 */
export async function screenshot(
  browser: Browser,
  page: Page,
  name: string,
  texts: string[],
): Promise<string> {
  const shown = await page.evaluate(() => document.body.innerText);
  for (const text of texts) expect(shown, `${name} shows "${text}"`).toContain(text);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  const png = await page.screenshot();
  writeFileSync(file, png);
  const stats = await pngStats(browser, png);
  const viewport = page.viewportSize();
  expect(stats.width, name).toBe(viewport?.width);
  expect(stats.height, name).toBe(viewport?.height);
  expect(stats.colours, `${name}: colours`).toBeGreaterThan(50);
  expect(stats.commonest, `${name}: share of the commonest colour`).toBeLessThan(0.97);
  return file;
}
