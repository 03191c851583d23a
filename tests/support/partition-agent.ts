// What the partition tests run inside a network namespace (started by nsenter, so every process it
// starts is in that namespace too), one role per process:
//   node '<env JSON>'   one node of the service (PostgREST, the edge, nginx) as startNode runs it, over
//                       the database URL AUTHENTICATOR_URL; prints "ready", stops on SIGTERM
//   fake '<facts JSON>' a fake Polymarket (tests/support/fake-polymarket.ts) on this namespace's
//                       loopback, for the writer beside it; prints the writer's settings as JSON
//   read '<JSON>'       a reader: every 250 ms it asks the node on this namespace's loopback for the
//                       checkpoint (/log/checkpoint), the log (landing_log) and health (both hosts),
//                       and prints one JSON line per answer (a ReaderEvent)
// Everything it prints goes to its parent, which keeps it as the run's history.
import { API_PATHS, SITE_PATHS } from '../../contract/paths.ts';
import { configFromEnv } from '../../config/config.ts';
import type { Env } from '../../config/settings.ts';
import { startNode } from '../../stack/stack.ts';
import { fakeAccount } from './fake-polymarket-account.ts';
import { FakePolymarket, writerEnv } from './fake-polymarket.ts';

/** One answer a reader got: when it asked (epoch ms), how long it took, and what it says of the log and of health. */
export interface ReaderEvent {
  reader: string;
  what: 'checkpoint' | 'landing_log' | 'site_health' | 'api_health';
  at: number;
  ms: number;
  /** The HTTP status, or 'hung' when no answer came within the reader's timeout, or 'error' (connection refused …). */
  status: number | 'hung' | 'error';
  /** Checkpoints the answer carries (the served one, or every one landing_log lists), by size and root hash. */
  checkpoints?: { size: number; root: string }[];
  /** Health: its status ("ok", "degraded", "down"), the writer it names, the log size it gives. */
  health?: { status: string; writer: string | null; logSize: number | null };
}

const [role, json] = process.argv.slice(2);
const input = JSON.parse(json ?? '{}') as Record<string, string>;
const print = (value: unknown) => process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);

async function node(): Promise<void> {
  const env = input as Env;
  const running = await startNode(configFromEnv(env), env.AUTHENTICATOR_URL!, { log: print, replica: true, onGiveUp: (why) => print(`gave up: ${why}`) });
  print('ready');
  const stop = async () => {
    await running.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

async function fake(): Promise<void> {
  const facts = input as unknown as { chainBalance?: string } & Record<string, unknown>;
  const fakeServer = await new FakePolymarket(fakeAccount({ ...facts, chainBalance: BigInt(facts.chainBalance ?? 0) } as never)).start();
  print(JSON.stringify(writerEnv(fakeServer)));
  process.once('SIGTERM', () => void fakeServer.stop().then(() => process.exit(0)));
}

/** The checkpoint note's size and root hash (its second and third lines, https://c2sp.org/tlog-checkpoint). */
const noteCheckpoint = (note: string) => {
  const [, size, root] = note.split('\n');
  return { size: Number(size), root: root ?? '' };
};

async function read(): Promise<void> {
  const { name, site, api, anonKey, timeoutMs = '5000', everyMs = '250' } = input as Record<string, string>;
  const asks: [ReaderEvent['what'], string, Record<string, string>][] = [
    ['checkpoint', site + SITE_PATHS.LOG_CHECKPOINT, {}],
    ['landing_log', api + API_PATHS.LOG, { apikey: anonKey! }],
    ['site_health', site + SITE_PATHS.SITE_HEALTH, {}],
    ['api_health', api + API_PATHS.HEALTH, { apikey: anonKey! }],
  ];
  let reading = true;
  process.once('SIGTERM', () => { reading = false; });
  while (reading) {
    const round = Date.now();
    await Promise.all(asks.map(async ([what, url, headers]) => {
      const at = Date.now();
      const event: ReaderEvent = { reader: name!, what, at, ms: 0, status: 'error' };
      try {
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(Number(timeoutMs)) });
        const body = await res.text();
        event.status = res.status;
        if (res.status === 200) {
          if (what === 'checkpoint') event.checkpoints = [noteCheckpoint(body)];
          else if (what === 'landing_log') {
            const record = JSON.parse(body) as { checkpoints: { size: number; root: string }[]; log_checkpoint: { size: number; root: string } | null };
            event.checkpoints = [...record.checkpoints.map((c) => ({ size: Number(c.size), root: c.root })),
              ...(record.log_checkpoint ? [{ size: Number(record.log_checkpoint.size), root: record.log_checkpoint.root }] : [])];
          } else {
            const record = JSON.parse(body) as { status: string; writer: { name?: string | null } | null; log?: { size?: number | null } | null };
            event.health = { status: record.status, writer: record.writer?.name ?? null, logSize: record.log?.size ?? null };
          }
        }
      } catch (error) {
        event.status = (error as Error).name === 'TimeoutError' ? 'hung' : 'error';
      }
      event.ms = Date.now() - at;
      print(event);
    }));
    await new Promise((r) => setTimeout(r, Math.max(0, Number(everyMs) - (Date.now() - round))));
  }
  process.exit(0);
}

const roles: Record<string, () => Promise<void>> = { node, fake, read };
if (!role || !roles[role]) {
  process.stderr.write('usage: partition-agent.ts node|fake|read <JSON>\n');
  process.exit(2);
}
roles[role]!().catch((error: Error) => {
  process.stderr.write(`${role} failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
