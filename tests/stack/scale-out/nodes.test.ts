// More gateway and edge nodes: a second node (its own PostgREST, edge and nginx, on ports of its own)
// over the same database, with the same keys and public URLs, as a second machine behind a load
// balancer would run. Every cached path of both hosts, in every coding, answers with the same bytes
// and validators from either node, and each node's signature verifies for the public URL; after a
// write, both move to the new record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../../contract/dates.ts';
import { API_PATHS } from '../../../contract/paths.ts';
import { waitUntil } from '../../../stack/processes.ts';
import { CACHED_PATHS, CODINGS, expectSameAnswers } from '../../support/nodes.ts';
import { rawGet } from '../../support/signatures.ts';
import { startTestNode, startTestStack, type TestNode, type TestStack } from '../../support/stack.ts';
import { cliEnv, runCli } from '../../support/writer.ts';

let stack: TestStack;
let second: TestNode;
const today = todayUtc();

async function importEvents(events: object[]) {
  const result = await runCli(['import', '-'], cliEnv(stack), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect(result.code, result.stderr).toBe(0);
}

const publicUrls = () => ({ site: stack.cfg.siteUrl, api: stack.cfg.apiUrl });
const statsEtag = async (cfg: TestStack['cfg']) =>
  (await rawGet(`http://${cfg.bindHost}:${cfg.apiPort}${API_PATHS.STATS}`, { apikey: cfg.ANON_KEY })).headers.etag;

beforeAll(async () => {
  stack = await startTestStack();
  const events: object[] = [];
  for (let i = 60; i >= 1; i--) {
    const date = addDays(today, -i);
    events.push({ type: 'payout', date, usd: 12 + (i % 9) * 1.75 });
    if (i % 3) events.push({ type: 'trading_cost', date, usd: (i % 4) - 1.5 });
    events.push({ type: 'capital', at: `${date}T20:00:00Z`, cash_usd: 2500 + i * 3, inventory_usd: 80, positions: 2 });
  }
  await importEvents(events);
  second = await startTestNode(stack);
}, 180_000);

afterAll(async () => {
  await second?.destroy();
  await stack?.destroy();
});

describe('two nodes over one database', () => {
  it('run apart: their own ports and processes, the same public URLs and keys', () => {
    expect(second.cfg.apiPort).not.toBe(stack.cfg.apiPort);
    expect(second.cfg.sitePort).not.toBe(stack.cfg.sitePort);
    expect(second.cfg.postgrestPort).not.toBe(stack.cfg.postgrestPort);
    expect(second.nginx.child!.process.pid).not.toBe(stack.nginx.child!.process.pid);
    expect(second.edge.child!.process.pid).not.toBe(stack.edge.child!.process.pid);
    expect([second.cfg.siteUrl, second.cfg.apiUrl]).toEqual([stack.cfg.siteUrl, stack.cfg.apiUrl]);
  });

  it('answer every cached record in every coding with the same bytes and validators, and signatures that verify', async () => {
    expect(await expectSameAnswers(stack.cfg, second.cfg, publicUrls())).toBe(CACHED_PATHS.length * CODINGS.length);
  }, 60_000);

  it('both move to the new record after a write, and agree again', async () => {
    const before = await statsEtag(stack.cfg);
    await importEvents([{ type: 'payout', date: today, usd: 99.5 }]);
    for (const cfg of [stack.cfg, second.cfg]) {
      await waitUntil('each node to serve the new record', async () => (await statsEtag(cfg)) !== before, 20_000);
    }
    expect(await expectSameAnswers(stack.cfg, second.cfg, publicUrls())).toBe(CACHED_PATHS.length * CODINGS.length);
  }, 90_000);
});
