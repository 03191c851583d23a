// `node edge/warm-once.ts`: one pass over every cached answer of both gateways, as the edge's warm
// keeper asks for them (edge/warm.ts), for whoever starts the gateways: the local stack runs it before
// it says it is running, so that no first caller waits for an entry. It reads the edge's own settings
// (EDGE_SITE_GATEWAY, EDGE_API_UPSTREAM, ANON_KEY), says what could not be warmed, and exits 0: an
// entry left cold is filled by its first caller.
import { warmOnce, warmTargets } from './warm.ts';

/** Generous: a first pass may meet an edge that is still starting its workers. */
const TIMEOUT_MS = 10_000;

const missing = ['EDGE_SITE_GATEWAY', 'EDGE_API_UPSTREAM', 'ANON_KEY'].filter((name) => !process.env[name]);
if (missing.length) {
  console.error(`${missing.join(', ')} not set: the warming pass needs both gateways' addresses and the anon key.`);
  process.exit(2);
}
const gateways = { site: process.env.EDGE_SITE_GATEWAY!, api: process.env.EDGE_API_UPSTREAM! };
const failed = await warmOnce(warmTargets(gateways, process.env.ANON_KEY!), TIMEOUT_MS);
if (failed.length) console.log(`The gateways' caches could not all be warmed before start (${failed.length}); first: ${failed[0]}`);
