// `npm run docs:screenshot`: the picture of the landing page that the README shows, docs/images/page.png.
// It starts a private stack with the demo history (as the tests do: its own ports and data directory,
// removed afterwards), opens the page in Debian's Chromium, headless, and saves what a reader sees
// first. Run it again whenever the page changes, and commit the picture.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT_DIR } from '../../config/checkout.ts';
import { readCommandLine } from '../../config/command-line.ts';
import { startTestStack } from '../../stack/ephemeral.ts';

const SCREENSHOT = path.join(ROOT_DIR, 'docs', 'images', 'page.png');
/** Wide enough for four figures a row, tall enough for the figures and the chart of the last nights. */
const VIEWPORT = { width: 1100, height: 970 };

const USAGE = `Usage: npm run docs:screenshot
Starts a private stack with the demo history, opens its page in Chromium (/usr/bin/chromium), headless,
and writes what a reader sees first to ${path.relative(ROOT_DIR, SCREENSHOT)} (${VIEWPORT.width}×${VIEWPORT.height}).
  --help   print this help and start nothing`;
readCommandLine(USAGE, { options: {}, allowPositionals: false });

const stack = await startTestStack({ seedDemo: true });
try {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await (await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 })).newPage();
    const res = await page.goto(`${stack.cfg.siteUrl}/`, { waitUntil: 'load' });
    if (res?.status() !== 200) throw new Error(`The page answered ${res?.status()}, not 200.`);
    // Chromium's own PNG: re-encoding it losslessly gained nothing (it filters each row and deflates well).
    const png = await page.screenshot({ fullPage: false });
    writeFileSync(SCREENSHOT, png);
    console.log(`Wrote ${path.relative(ROOT_DIR, SCREENSHOT)} (${VIEWPORT.width}×${VIEWPORT.height}, ${Math.round(png.length / 1024)} KiB).`);
  } finally {
    await browser.close();
  }
} finally {
  await stack.destroy();
}
