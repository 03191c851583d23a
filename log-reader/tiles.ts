// log-reader/: a follower's reading of the transparency log from the standards alone, on Node's own
// modules: notes, tiles, tree hashes, saved state, the checkpoint archive. It imports nothing of
// the project's.
//
// The log as tiles (https://c2sp.org/tlog-tiles): its entry bundles and hash tiles, read and checked
// against the checkpoint that names them.
import { utf8 } from './encoding.ts';
import { fail, Failure, Stale } from './failure.ts';
import { decoded, eachLimited, expectOk, get, MAX_DOCUMENT_BYTES } from './http.ts';
import type { Checkpoint } from './notes.ts';
import { HASH_SIZE, leafHash, subtreeLevels, treeHash } from './tree.ts';

/** tlog-tiles: tiles of height 8, so 256 hashes or entries wide. */
const TILE_HEIGHT = 8;
const TILE_WIDTH = 1 << TILE_HEIGHT;

const MAX_BUNDLE_BYTES = TILE_WIDTH * (2 + 0xffff);

interface Tile { level: 'entries' | number; index: number; width: number }

/** tlog-tiles: N as 3-digit path elements, all but the last prefixed with x; .p/W for a partial tile. */
function tilePath(prefix: string, tile: Tile, width = tile.width): string {
  const groups: string[] = [];
  let n = tile.index;
  do { groups.unshift(String(n % 1000).padStart(3, '0')); n = Math.floor(n / 1000); } while (n > 0);
  return `${prefix}/tile/${tile.level}/${groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/')}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
}

/** The tiles of a level holding `count` hashes (or entries): the full ones, then a partial one. */
function tilesOf(level: Tile['level'], count: number): Tile[] {
  const tiles: Tile[] = [];
  for (let index = 0; index * TILE_WIDTH < count; index++) tiles.push({ level, index, width: Math.min(TILE_WIDTH, count - index * TILE_WIDTH) });
  return tiles;
}

/** A tile's bytes. A partial tile may be gone once the full one exists (tlog-tiles), so that is the fallback. */
async function readTile(site: URL, prefix: string, tile: Tile, cache: Map<string, Buffer>): Promise<{ body: Buffer; width: number; path: string }> {
  const max = tile.level === 'entries' ? MAX_BUNDLE_BYTES : TILE_WIDTH * HASH_SIZE;
  const what = tile.level === 'entries' ? 'an entry bundle' : 'a hash tile';
  const fetchTile = async (width: number) => {
    const path = tilePath(prefix, tile, width);
    const cached = cache.get(path);
    if (cached) return { answer: undefined, body: cached, path };
    const answer = await get(new URL(path, site), max, tile.level === 'entries' ? 'gzip, identity' : 'identity');
    const body = answer.status === 200 ? decoded(answer, `${what} (${path})`, max) : undefined;
    // Full tiles never change: keep them for a later read of a grown log.
    if (body && width === TILE_WIDTH) cache.set(path, body);
    return { answer, body, path };
  };
  const first = await fetchTile(tile.width);
  if (first.body) return { body: first.body, width: tile.width, path: first.path };
  if (tile.width < TILE_WIDTH && first.answer?.status === 404) {
    const full = await fetchTile(TILE_WIDTH);
    if (full.body) return { body: full.body, width: TILE_WIDTH, path: full.path };
  }
  // The demo log goes when real data arrive: a run that began with it may find it gone.
  if (first.answer?.status === 404 && prefix.endsWith('/demo')) throw new Stale(`${what} of the demo log (${first.path}) is gone, the demo data with it (even after waiting for caches)`);
  expectOk(first.answer!, what);
  return fail(`${what} could not be read`);
}

/** An entry bundle: big-endian uint16 length-prefixed entries, exactly as many as the tile is wide. */
function bundleEntries(body: Buffer, width: number, path: string): Buffer[] {
  const entries: Buffer[] = [];
  for (let at = 0; at < body.length;) {
    if (at + 2 > body.length) fail(`the entry bundle ${path} is cut short`);
    const length = body.readUInt16BE(at);
    if (at + 2 + length > body.length) fail(`the entry bundle ${path} is cut short`);
    entries.push(body.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  if (entries.length !== width) fail(`the entry bundle ${path} holds ${entries.length} entries, not ${width}`);
  return entries;
}

/** The first `size` entries as the entry bundles give them, and the subtree hashes they make. */
export async function readTree(site: URL, prefix: string, size: number, cache: Map<string, Buffer>): Promise<{ entries: Buffer[]; levels: Buffer[][]; tiles: number }> {
  const bundles = await eachLimited(tilesOf('entries', size), async (tile) => {
    const { body, width, path } = await readTile(site, prefix, tile, cache);
    return bundleEntries(body, width, path).slice(0, tile.width);
  });
  const entries = bundles.flat();
  return { entries, levels: subtreeLevels(entries.map(leafHash)), tiles: bundles.length };
}

export interface Log { checkpoint: Checkpoint; prefix: string; entries: Buffer[]; levels: Buffer[][]; tiles: number }

export async function readLog(site: URL, prefix: string, checkpoint: Checkpoint, cache: Map<string, Buffer>): Promise<Log> {
  const size = checkpoint.size;
  const { entries, levels, tiles } = await readTree(site, prefix, size, cache);
  // RFC 6962 §2.1: the empty tree's hash is SHA-256 of nothing; Go's sumdb/tlog writes zeros instead, accepted for size 0.
  const empty = size === 0 && checkpoint.root.equals(Buffer.alloc(HASH_SIZE));
  if (!empty && !treeHash(levels, 0, size).equals(checkpoint.root)) fail(`the log's entries do not hash to the root of checkpoint ${size}`);
  // Every hash tile a client of the log would read must hold the hashes the entries make: level L
  // holds the MTH of each complete subtree of 256^L leaves.
  const hashTiles: Tile[] = [];
  for (let level = 0; TILE_WIDTH ** level <= size; level++) hashTiles.push(...tilesOf(level, Math.floor(size / TILE_WIDTH ** level)));
  await eachLimited(hashTiles, async (tile) => {
    const { body, width, path } = await readTile(site, prefix, tile, cache);
    const hashes = levels[TILE_HEIGHT * (tile.level as number)]!;
    const first = tile.index * TILE_WIDTH;
    const expected = Buffer.concat(hashes.slice(first, first + tile.width));
    if (body.length !== width * HASH_SIZE || !body.subarray(0, tile.width * HASH_SIZE).equals(expected)) {
      fail(`the hash tile ${path} does not match the log's entries`);
    }
  });
  return { checkpoint, prefix, entries, levels, tiles: tiles + hashTiles.length };
}

/** A document of the log, as text; the demo log's may be gone once real data arrive. */
export async function getText(site: URL, path: string, what: string): Promise<string> {
  const found = await get(new URL(path, site), MAX_DOCUMENT_BYTES);
  if (found.status === 404 && path.startsWith('/log/demo/')) throw new Stale(`${what} of the demo log (${path}) is gone, the demo data with it (even after waiting for caches)`);
  const answer = expectOk(found, what);
  try { return utf8.decode(decoded(answer, what, MAX_DOCUMENT_BYTES)); } catch (error) { if (error instanceof Failure) throw error; return fail(`${what} is not UTF-8`); }
}
