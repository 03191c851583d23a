// The two private stacks the landing page's browser tests read (one with the demo dataset, one with
// real-looking imported rows), the headless Chromium that reads them, and the page's way of writing
// amounts and instants.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { chromium, type Browser } from 'playwright-core';
import { ROOT_DIR } from '../../config/checkout.ts';
import { startTestStack, type TestStack } from './stack.ts';

/** Where the screenshots go, for review. */
export const OUT_DIR = path.join(ROOT_DIR, 'test-output', 'edge');

/** 20 settled nights of non-demo rows, as an import would leave them. */
async function importRealLookingData(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`
      insert into stats.payout (date, usd, is_demo)
        select (now() at time zone 'utc')::date - i, 30 + (i * 7 % 23) + 0.125, false from generate_series(0, 19) i;
      insert into stats.trading_cost (date, usd, is_demo)
        select (now() at time zone 'utc')::date - i, 4 + (i % 5), false from generate_series(0, 19) i;
      insert into stats.capital (observed_at, cash_usd, inventory_usd, positions, is_demo)
        values (now() - interval '2 minutes', 5000.5, 1234.25, 12, false);
      insert into stats.accrual (observed_at, usd, markets, is_demo) values (now() - interval '1 minute', 12.34, 17, false);
      insert into stats.breadth (observed_at, markets_quoted_24h, is_demo) values (now() - interval '1 minute', 29, false);
      insert into stats.heartbeat (at, is_demo) values (now(), false);
      update stats.settings set data_source = 'import';`);
  } finally {
    await client.end();
  }
}

/** Both stacks and Debian's chromium, driven by playwright-core, started side by side. */
export async function startLandingStacks(): Promise<{ demo: TestStack; imported: TestStack; browser: Browser }> {
  mkdirSync(OUT_DIR, { recursive: true });
  const [demo, imported, browser] = await Promise.all([
    startTestStack({ seedDemo: true }),
    startTestStack().then(async (s) => { await importRealLookingData(s.db.adminUrl); return s; }),
    chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    }),
  ]);
  return { demo, imported, browser };
}

/** Stops what startLandingStacks started, whatever part of it did start. */
export async function stopLandingStacks({ demo, imported, browser }: Partial<{ demo: TestStack; imported: TestStack; browser: Browser }>): Promise<void> {
  await browser?.close();
  await Promise.all([demo?.destroy(), imported?.destroy()]);
}

/** An amount in dollars as the page writes it: "$1,234.50". */
export const usd = (n: number) => `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
/** An ISO instant as the page should show it to a person: "26 Nov 2026, 07:27 UTC". */
export const readable = (iso: string) => {
  const t = new Date(iso);
  const month = t.toLocaleString('en-GB', { month: 'short', timeZone: 'UTC' });
  return `${t.getUTCDate()} ${month} ${t.getUTCFullYear()}, ${String(t.getUTCHours()).padStart(2, '0')}:${String(t.getUTCMinutes()).padStart(2, '0')} UTC`;
};
