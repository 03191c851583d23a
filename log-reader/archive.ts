// The listing of a log's archived checkpoints (`<prefix>/checkpoint/`): the sizes a site has kept a
// checkpoint of, each of which a follower may read and check.
import { isRecord, parseJson } from './encoding.ts';
import { fail, Stale } from './failure.ts';
import { decoded, expectOk, get, MAX_ANSWER_BYTES } from './http.ts';

export interface ArchiveListing { vkey: unknown; sizes: number[] }

export async function readListing(site: URL, prefix: string, demo: boolean): Promise<ArchiveListing> {
  const what = 'the checkpoint archive';
  const found = await get(new URL(`${prefix}/checkpoint/`, site), MAX_ANSWER_BYTES);
  // The figures and the log move from demo to real data together, but not through every cache at once.
  if (found.status === 404) {
    throw new Stale(`/api/history says the figures are ${demo ? 'demo data' : 'real'}, but the site serves no log under ${prefix}/ (even after waiting for caches)`);
  }
  const answer = expectOk(found, what);
  const listing = parseJson(decoded(answer, what, MAX_ANSWER_BYTES), what);
  if (!isRecord(listing) || !Array.isArray(listing.checkpoints)) return fail(`${what} (${prefix}/checkpoint/) is not a listing of checkpoints`);
  const sizes = listing.checkpoints.map((c: unknown) => (isRecord(c) && Number.isSafeInteger(c.size) && (c.size as number) >= 0 ? c.size as number : fail(`${what} lists a checkpoint without a size`)));
  return { vkey: listing.vkey, sizes };
}
