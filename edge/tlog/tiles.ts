// C2SP tlog-tiles (https://c2sp.org/tlog-tiles) with tiles of height 8: the paths under a log's
// prefix, the tree size from which a log holds each tile, and the bytes of hash tiles and entry
// bundles, cut from a tree.
import type { Tree } from '../../contract/tlog/merkle.ts';

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 2 ** TILE_HEIGHT;

export interface TileAddress {
  /** A hash tile's level, or an entry bundle. */
  level: number | 'entries';
  index: number;
  /** 1–255 for a partial tile; undefined for a full one. */
  width?: number;
}

/** Index 1234067 is x001/x234/067: three-digit groups, all but the last prefixed with x. */
export function tileIndexPath(index: number): string {
  const groups: string[] = [];
  for (let n = index; ; n = Math.floor(n / 1000)) {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    if (n < 1000) break;
  }
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

export function tilePath(tile: TileAddress): string {
  return `tile/${tile.level}/${tileIndexPath(tile.index)}${tile.width === undefined ? '' : `.p/${tile.width}`}`;
}

const TILE_PATH = /^tile\/(entries|0|[1-9]\d?)\/((?:x\d{3}\/)*\d{3})(?:\.p\/([1-9]\d{0,2}))?$/;

/** The tile a path under the prefix names, or undefined unless it is the canonical path of one. */
export function parseTilePath(path: string): TileAddress | undefined {
  const match = TILE_PATH.exec(path);
  if (!match) return undefined;
  const level = match[1] === 'entries' ? 'entries' : Number(match[1]);
  if (level !== 'entries' && level > 63) return undefined;
  const index = Number(match[2]!.replace(/x|\//g, ''));
  const width = match[3] === undefined ? undefined : Number(match[3]);
  if (width !== undefined && width >= TILE_WIDTH) return undefined;
  const tile: TileAddress = { level, index, width };
  // One path per tile: no leading zero groups (x000/001 is 001).
  return Number.isSafeInteger(index) && tilePath(tile) === path ? tile : undefined;
}

function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  return out;
}

/**
 * The tile's bytes, or undefined when the tree does not hold it (yet). A hash tile at level L holds
 * the hashes of complete subtrees of 256^L leaves; an entry bundle holds the entries, each after its
 * length as a big-endian uint16. A partial tile of any width the tree holds is served, so the tiles
 * of every earlier checkpoint stay available.
 */
export function tileBytes(tree: Tree, entries: readonly Uint8Array[], tile: TileAddress): Uint8Array<ArrayBuffer> | undefined {
  const width = tile.width ?? TILE_WIDTH;
  const first = tile.index * TILE_WIDTH;
  if (tile.level === 'entries') {
    if (first + width > entries.length) return undefined;
    return concat(entries.slice(first, first + width).flatMap((entry) => [Uint8Array.of(entry.length >> 8, entry.length & 0xff), entry]));
  }
  const hashes = tree.levels[tile.level * TILE_HEIGHT];
  if (!hashes || first + width > hashes.length) return undefined;
  return concat(hashes.slice(first, first + width));
}

/** The tree size from which the log holds `tile`. */
export function sizeHolding(tile: TileAddress): number {
  const level = tile.level === 'entries' ? 0 : tile.level;
  return (tile.index * TILE_WIDTH + (tile.width ?? TILE_WIDTH)) * TILE_WIDTH ** level;
}
