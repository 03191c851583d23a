// Pure pieces of the writer: L2 signing against the published vectors, redaction, Retry-After,
// defensive parsing of Polymarket's numbers and dates, the payout-date convention, configuration,
// and the import format's one table against its help and its reference page.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../config/checkout.ts';
import { sourceFromEnv, writerConfigFromEnv } from '../../config/writer.ts';
import { EVENT_FIELDS, EVENT_TYPES, eventFormat, parseEvent } from '../../writer/events.ts';
import { HELP } from '../../writer/help.ts';
import { createLogger } from '../../writer/log.ts';
import { decimal, rowDate } from '../../writer/polymarket/parse.ts';
import { l2Headers, signL2 } from '../../writer/polymarket/hmac.ts';
import { readErrorBody, retryAfterMs } from '../../writer/polymarket/http.ts';
import { ACTIVITY_KINDS, tradingCost } from '../../writer/polymarket/ledger.ts';
import { DemoSource } from '../../writer/demo.ts';

const SECRET = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

describe('L2 signing', () => {
  it('matches the official clob-client test vector', () => {
    expect(signL2(SECRET, 1000000, 'test-sign', '/orders', '{"hash": "0x123"}')).toBe('ZwAdJKvoYRlEKDkNMwd5BuwNNtg93kNaR_oU2HrfVvc=');
  });

  it('matches the GET vector of the reference notes (path without query, no body)', () => {
    expect(signL2(SECRET, 1700000000, 'GET', '/rewards/user')).toBe('yXJ65LwT_rNyYrt-TPX_otBGaAiQ9e6a2B-Y0qECFjI=');
  });

  it('accepts a base64url secret and builds the five headers', () => {
    const urlSafe = Buffer.alloc(32, 0xfb).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
    const standard = Buffer.alloc(32, 0xfb).toString('base64');
    expect(signL2(urlSafe, 1, 'GET', '/x')).toBe(signL2(standard, 1, 'GET', '/x'));
    const headers = l2Headers({ apiKey: 'k', secret: SECRET, passphrase: 'p', address: 'a' }, 1700000000, 'GET', '/rewards/user');
    expect(headers).toEqual({ POLY_ADDRESS: 'a', POLY_API_KEY: 'k', POLY_PASSPHRASE: 'p', POLY_TIMESTAMP: '1700000000', POLY_SIGNATURE: 'yXJ65LwT_rNyYrt-TPX_otBGaAiQ9e6a2B-Y0qECFjI=' });
  });
});

describe('log redaction', () => {
  it('masks addresses, ids, UUID keys and registered secrets in messages and fields', () => {
    const out: string[] = [];
    const log = createLogger({ json: true, write: (l) => out.push(l) });
    log.addSecrets('my-passphrase-value');
    const address = '0x' + 'a1'.repeat(20);
    const conditionId = '0x' + 'c3'.repeat(32);
    log.warn(`GET /value?user=${address} failed`, { market: conditionId, key: '0c1d2e3f-1111-2222-3333-444455556666', note: 'my-passphrase-value' });
    expect(out).toHaveLength(1);
    expect(out[0]).not.toContain(address.slice(2));
    expect(out[0]).not.toContain(conditionId.slice(2));
    expect(out[0]).not.toContain('0c1d2e3f-1111');
    expect(out[0]).not.toContain('my-passphrase-value');
    expect(JSON.parse(out[0]!)).toMatchObject({ level: 'warn', msg: 'GET /value?user=0x[redacted] failed', market: '0x[redacted]', note: '[redacted]' });
  });
});

describe('Polymarket parsing', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000 + 3000).toUTCString(), 10_000)).toBeGreaterThanOrEqual(2000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('reads a retry_after_seconds hint and a short detail from an error body, never a whole HTML page', () => {
    expect(readErrorBody('{"error":"rate limited","retry_after_seconds":7}')).toEqual({ detail: 'rate limited', retryAfterMs: 7000 });
    expect(readErrorBody('{"error":"service not ready"}')).toEqual({ detail: 'service not ready', retryAfterMs: undefined });
    expect(readErrorBody('<html><body>Too many requests</body></html>')).toEqual({ detail: 'HTML error page' });
  });

  it('takes numbers and numeric strings, and rejects anything else naming the field', () => {
    expect(decimal('12.5', 'earnings')).toBe(12.5);
    expect(decimal(3, 'earnings')).toBe(3);
    expect(() => decimal('abc', 'earnings')).toThrow('earnings is not a number');
    expect(() => decimal(undefined, 'asset_rate')).toThrow('asset_rate is not a number');
  });

  it('reads row dates as ISO date-times, YYYY-MM-DD or epoch milliseconds', () => {
    expect(rowDate('2024-03-26T00:00:00Z')).toBe('2024-03-26');
    expect(rowDate('2024-03-26')).toBe('2024-03-26');
    expect(rowDate(Date.UTC(2024, 2, 26))).toBe('2024-03-26');
    expect(rowDate(String(Date.UTC(2024, 2, 26)))).toBe('2024-03-26');
    expect(rowDate(undefined)).toBeUndefined();
  });
});

describe('the trading-cost ledger', () => {
  it('classifies every documented activity type: income, transfers, trading', () => {
    expect(Object.keys(ACTIVITY_KINDS).sort()).toEqual(['CONVERSION', 'DEPOSIT', 'MAKER_REBATE', 'MERGE', 'MIGRATION', 'REDEEM', 'REFERRAL_REWARD',
      'REWARD', 'SPLIT', 'TAKER_REBATE', 'TIP', 'TRADE', 'WITHDRAWAL', 'YIELD']);
    expect(ACTIVITY_KINDS.TAKER_REBATE).toBe(ACTIVITY_KINDS.MAKER_REBATE);
    expect(ACTIVITY_KINDS.TIP).toBe('transfer');
    expect(ACTIVITY_KINDS.MIGRATION).toBe('trading');
  });

  it('counts a tip received with the deposits and a tip sent with the withdrawals, by its size and side', () => {
    // Equity 1000 → 1030: 25 tipped in, 5 tipped out, a 40 migration: trading gained 10.
    const flows = [
      { type: 'TIP', usdcSize: 25, size: 25, side: 'IN' }, { type: 'TIP', usdcSize: 5, size: 5, side: 'OUT' },
      { type: 'MIGRATION', usdcSize: 40, size: 40, side: '' },
    ];
    expect(tradingCost({ cash: 1000, inventory: 0 }, { cash: 1030, inventory: 0 }, flows)).toEqual({ kind: 'cost', usd: -10, income: 0, deposits: 25, withdrawals: 5 });
  });

  it('leaves a day with a tip it cannot read provisional: no direction, or a size that disagrees with usdcSize', () => {
    for (const tip of [{ side: '', size: 3 }, { side: 'SIDEWAYS', size: 3 }, { side: 'IN', size: 4 }, { side: 'OUT', size: undefined }]) {
      expect(tradingCost({ cash: 1, inventory: 0 }, { cash: 2, inventory: 0 }, [{ type: 'TIP', usdcSize: 3, ...tip }]))
        .toEqual({ kind: 'provisional', unknownTypes: ['TIP'] });
    }
  });

  it('removes income and transfers from the change of equity; trading rows are already inside it', () => {
    // Equity 5000 → 5200 with a 300 deposit, a 50 withdrawal and a 40 reward: trading lost 90.
    const flows = [
      { type: 'DEPOSIT', usdcSize: 300 }, { type: 'WITHDRAWAL', usdcSize: 50 }, { type: 'REWARD', usdcSize: 40 },
      { type: 'TRADE', usdcSize: 1000 }, { type: 'MERGE', usdcSize: 12 },
    ];
    const r = tradingCost({ cash: 4000, inventory: 1000 }, { cash: 4300, inventory: 900 }, flows);
    expect(r).toEqual({ kind: 'cost', usd: 90, income: 40, deposits: 300, withdrawals: 50 });
    // A withdrawal reported with a negative sign counts the same.
    expect(tradingCost({ cash: 100, inventory: 0 }, { cash: 50, inventory: 0 }, [{ type: 'WITHDRAWAL', usdcSize: -50 }])).toMatchObject({ usd: -0 });
  });

  it('leaves a day with an unknown type provisional, naming only the type', () => {
    expect(tradingCost({ cash: 1, inventory: 0 }, { cash: 2, inventory: 0 }, [{ type: 'PORTAL_CREDIT', usdcSize: 1 }, { type: 'TRADE', usdcSize: 1 }]))
      .toEqual({ kind: 'provisional', unknownTypes: ['PORTAL_CREDIT'] });
  });
});

describe('the demo source', () => {
  it('is deterministic, and the payout dated D+1 is what accrued through day D', async () => {
    const demo = new DemoSource();
    const endOfDay = new Date(Date.parse('2026-03-10T00:00:00Z') - 1);
    const accrued = await demo.accrual(endOfDay);
    expect(accrued.usd).toBeCloseTo(await demo.payout('2026-03-10'), 3);
    expect(await demo.payout('2026-03-10')).toBe(await new DemoSource().payout('2026-03-10'));
    expect((await demo.accrual(new Date('2026-03-10T00:00:00Z'))).usd).toBe(0);
  });
});

describe('writer configuration', () => {
  const base = { WRITER_DATABASE_URL: 'postgres://stats_writer:x@127.0.0.1:1/postgres' };
  it('defaults to demo without credentials and to polymarket with them', () => {
    expect(sourceFromEnv({})).toBe('demo');
    expect(sourceFromEnv({ CLOB_API_KEY: 'k' })).toBe('polymarket');
    expect(sourceFromEnv({ WRITER_SOURCE: 'none', CLOB_API_KEY: 'k' })).toBe('none');
  });
  it('never picks demo silently beside credentials, and names missing variables', () => {
    expect(() => sourceFromEnv({ WRITER_SOURCE: 'demo', CLOB_API_KEY: 'k' })).toThrow(/never shown instead of a real account/);
    expect(() => writerConfigFromEnv({ ...base, WRITER_SOURCE: 'polymarket', CLOB_API_KEY: 'k' })).toThrow('needs CLOB_SECRET, CLOB_PASSPHRASE, POLY_ADDRESS');
    expect(() => sourceFromEnv({ WRITER_SOURCE: 'bogus' })).toThrow('WRITER_SOURCE must be demo, polymarket or none');
  });
  it('uses FUNDER_ADDRESS for the Data API and falls back to POLY_ADDRESS', () => {
    const env = { ...base, CLOB_API_KEY: 'k', CLOB_SECRET: SECRET, CLOB_PASSPHRASE: 'p', POLY_ADDRESS: '0xabc', SIGNATURE_TYPE: '1' };
    expect(writerConfigFromEnv(env).polymarket).toMatchObject({ funder: '0xabc', funderExplicit: false, signatureType: 1, clobHost: 'https://clob.polymarket.com' });
    expect(writerConfigFromEnv({ ...env, FUNDER_ADDRESS: '0xdef' }).polymarket).toMatchObject({ funder: '0xdef', funderExplicit: true });
    expect(() => writerConfigFromEnv({ ...env, SIGNATURE_TYPE: '7' })).toThrow('SIGNATURE_TYPE must be 0, 1, 2 or 3');
  });
  it('names the writer WRITER_NAME, else a fresh random name per process, and never a host or an address', () => {
    const [one, two] = [writerConfigFromEnv(base).name, writerConfigFromEnv(base).name];
    expect(one).toMatch(/^writer-[0-9a-f]{8}$/);
    expect(two).toMatch(/^writer-[0-9a-f]{8}$/);
    expect(one).not.toBe(two);
    expect(writerConfigFromEnv({ ...base, WRITER_NAME: 'primary-1' }).name).toBe('primary-1');
    for (const bad of ['two words', 'x'.repeat(33), '<b>', 'ä']) expect(() => writerConfigFromEnv({ ...base, WRITER_NAME: bad })).toThrow(/WRITER_NAME must be 1 to 32/);
    for (const where of ['10.0.0.7', hostname(), hostname().toUpperCase()]) { // (an IPv6 address fails the pattern already)
      expect(() => writerConfigFromEnv({ ...base, WRITER_NAME: where })).toThrow(/not a host name or an address/);
    }
  });
  it('reads the heartbeat and standby intervals in seconds', () => {
    expect(writerConfigFromEnv(base)).toMatchObject({ heartbeatMs: 60_000, standbyLogMs: 60_000 });
    expect(writerConfigFromEnv({ ...base, WRITER_HEARTBEAT_SECONDS: '1.5', WRITER_STANDBY_LOG_SECONDS: '3' })).toMatchObject({ heartbeatMs: 1500, standbyLogMs: 3000 });
    expect(() => writerConfigFromEnv({ ...base, WRITER_HEARTBEAT_SECONDS: '0' })).toThrow('WRITER_HEARTBEAT_SECONDS must be a positive number');
  });
});

describe('the import format', () => {
  it('is one table: each format the help shows, filled in, is an event the parser takes', () => {
    const sample: Record<string, string> = { '"YYYY-MM-DD"': '"2026-01-01"', ISO: '"2026-01-01T00:00:00Z"', n: '1.5', int: '3' };
    for (const type of EVENT_TYPES) {
      const line = eventFormat(type).replace(/:("YYYY-MM-DD"|ISO|n|int)(?=[,}])/g, (_, shown: string) => `:${sample[shown]}`);
      const event = parseEvent(line, 1, { now: new Date('2026-06-01T00:00:00Z'), earliestYear: 2020 });
      expect(Object.keys(event), line).toEqual(['type', ...Object.keys(EVENT_FIELDS[type])]);
      expect(event.type).toBe(type);
    }
  });

  it('is the list of event types its reference page names, and the page shows the help as it is', () => {
    const page = readFileSync(path.join(ROOT_DIR, 'docs', 'reference', 'import-format.md'), 'utf8');
    const bullet = /^- \*\*Import\*\*: one JSON event per line: ([^(]+)\(formats in `--help`\)/m.exec(page);
    expect(bullet, 'the page\'s Import bullet').not.toBeNull();
    expect([...bullet![1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1])).toEqual(EVENT_TYPES);
    expect(page, 'the help of `npm run writer -- import --help`, in a fence of its own').toContain(`\n\`\`\`\n${HELP.import}\n\`\`\`\n`);
  });

  it('names the event types in order when a line has another', () => {
    expect(() => parseEvent('{"type":"payment"}', 7, { now: new Date(), earliestYear: 2020 }))
      .toThrow(`line 7: type: must be one of ${EVENT_TYPES.join(', ')} (got "payment")`);
  });
});
