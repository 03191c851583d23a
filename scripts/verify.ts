// Checks the Public Stats Service from outside, as anyone can: `node verify.ts [--site URL] [--state FILE]`
// on Node 22.18 or later, nothing installed (this one file imports only Node's own modules; the site
// serves it at /log/verify.ts). It is written from the standards, not from the service's code:
//
// 1. the log's checkpoint (https://c2sp.org/tlog-checkpoint) is a signed note
//    (https://c2sp.org/signed-note) by a key of the site's key directory, named by its origin;
// 2. the entries and hash tiles (https://c2sp.org/tlog-tiles, height 8) rebuild exactly the tree
//    the checkpoint names (RFC 6962 hashing, https://www.rfc-editor.org/rfc/rfc6962#section-2.1);
// 3. every night /api/history serves is the latest log entry for its date;
// 4. /api/stats and /api/history carry RFC 9421 signatures (https://www.rfc-editor.org/rfc/rfc9421)
//    that verify, over an RFC 9530 Content-Digest of the bytes sent;
// 5. with --state, the log still extends the checkpoint saved by an earlier run, and the newest one
//    is saved for the next.
//
// Any failure ends with one sentence and exit status 1; bad usage exits 2.
import { createHash, createPublicKey, verify as ed25519Verify, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The site checked when --site is not given; the copy a site serves names that site here. */
const DEFAULT_SITE = 'http://127.0.0.1:8080';
const USAGE = `Usage: node verify.ts [--site URL] [--state FILE]
  --site URL    the site host to check (default ${DEFAULT_SITE})
  --state FILE  where the last checkpoint seen is kept; a later run checks the log still extends it`;
const TIMEOUT_MS = 20_000;
const MAX_BYTES = 64 * 1024 * 1024;
const TILE_WIDTH = 256;
/** How often, and how far apart, /api/history is asked again while it predates the checkpoint. */
const HISTORY_ATTEMPTS = 6;
const HISTORY_RETRY_MS = 5_000;
/** The answer signature this service makes: its label and the components it must cover. */
const SIGNATURE_LABEL = 'answer';
const REQUIRED_COMPONENTS = ['"@status"', '"content-type"', '"content-digest"', '"@authority";req', '"@path";req'];

class Failure extends Error {}
const fail = (sentence: string): never => { throw new Failure(sentence); };

interface Fetched { status: number; headers: Headers; body: Buffer }

async function fetchBytes(url: string, what: string): Promise<Fetched> {
  let res: Response;
  try {
    // identity: the bytes read are the bytes the digest and signature cover.
    res = await fetch(url, { headers: { 'accept-encoding': 'identity', 'user-agent': 'public-stats-verify/1.0' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    return fail(`${url} could not be reached (${(error as Error).message})`);
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > MAX_BYTES) fail(`${what} is larger than ${MAX_BYTES} bytes`);
  if (res.status !== 200) fail(`${what} answered HTTP ${res.status} (${url})`);
  return { status: res.status, headers: res.headers, body };
}

const sha256 = (...parts: Uint8Array[]) => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); };
const leafHash = (entry: Uint8Array) => sha256(Buffer.of(0), entry);
const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256(Buffer.of(1), left, right);

// --- the key directory ---------------------------------------------------------------------------

interface DirectoryKey { kid: string; raw: Buffer; key: KeyObject }

/** RFC 7638 thumbprint of an Ed25519 JWK: SHA-256 of {"crv","kty","x"} in that order. */
const thumbprint = (x: string) => sha256(Buffer.from(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`)).toString('base64url');

async function readDirectory(site: string): Promise<DirectoryKey[]> {
  const { body } = await fetchBytes(`${site}/.well-known/http-message-signatures-directory`, 'the key directory');
  let parsed: { keys?: { kty?: string; crv?: string; x?: string; kid?: string }[] };
  try { parsed = JSON.parse(body.toString('utf8')); } catch { return fail('the key directory is not JSON'); }
  const keys = (parsed.keys ?? []).filter((k) => k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string');
  if (keys.length === 0) fail('the key directory lists no Ed25519 key');
  return keys.map((k) => {
    if (k.kid !== undefined && k.kid !== thumbprint(k.x!)) fail(`the key directory's key ${k.kid} is not named by its thumbprint`);
    return { kid: thumbprint(k.x!), raw: Buffer.from(k.x!, 'base64url'), key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x! }, format: 'jwk' }) };
  });
}

// --- RFC 9421 answer signatures --------------------------------------------------------------------

/** The members of a Structured Field dictionary whose values are inner lists or byte sequences (RFC 8941), as written. */
function dictionaryMembers(field: string): Map<string, string> {
  const members = new Map<string, string>();
  let rest = field.trim();
  while (rest) {
    const label = /^([a-z*][a-z0-9_.*-]*)=/.exec(rest);
    if (!label) break;
    rest = rest.slice(label[0].length);
    // A value runs to the next comma outside quotes and parentheses.
    let depth = 0;
    let quoted = false;
    let end = 0;
    for (; end < rest.length; end++) {
      const ch = rest[end];
      if (quoted) { if (ch === '\\') end++; else if (ch === '"') quoted = false; continue; }
      if (ch === '"') quoted = true;
      else if (ch === '(') depth++;
      else if (ch === ')') depth--;
      else if (ch === ',' && depth === 0) break;
    }
    members.set(label[1]!, rest.slice(0, end).trim());
    rest = rest.slice(end + 1).trim();
  }
  return members;
}

function verifyAnswer(path: string, url: URL, answer: Fetched, keys: DirectoryKey[]): void {
  const broken = () => fail(`the signature of ${path} does not verify`);
  const digest = answer.headers.get('content-digest') ?? '';
  if (digest !== `sha-256=:${sha256(answer.body).toString('base64')}:`) fail(`the signature of ${path} does not verify: its Content-Digest does not match the body`);
  const params = dictionaryMembers(answer.headers.get('signature-input') ?? '').get(SIGNATURE_LABEL);
  const signature = /^:([A-Za-z0-9+/=]+):$/.exec(dictionaryMembers(answer.headers.get('signature') ?? '').get(SIGNATURE_LABEL) ?? '');
  if (!params || !signature) return fail(`${path} carries no "${SIGNATURE_LABEL}" signature`);
  const list = /^\(([^)]*)\)(.*)$/.exec(params);
  if (!list) return broken();
  const components = list[1]!.trim().split(/\s+/).filter(Boolean);
  const parameters = new Map([...list[2]!.matchAll(/;([a-z*][a-z0-9_.*-]*)(?:=("(?:[^"\\]|\\.)*"|[^;]*))?/g)].map((m) => [m[1]!, (m[2] ?? '').replace(/^"|"$/g, '')]));
  if (REQUIRED_COMPONENTS.some((c) => !components.includes(c)) || parameters.get('alg') !== 'ed25519' || !parameters.has('created') || !parameters.has('keyid')) return broken();
  const key = keys.find((k) => k.kid === parameters.get('keyid')) ?? broken();
  const lines = components.map((component) => {
    const name = /^"([^"]+)"/.exec(component)?.[1] ?? '';
    const value = ({
      '@status': String(answer.status),
      '@authority': url.host.toLowerCase(),
      '@path': url.pathname,
      '@query': url.search || '?',
    } as Record<string, string>)[name] ?? answer.headers.get(name)?.trim();
    if (value === undefined || (name.startsWith('@') && name !== '@status' && !component.endsWith(';req'))) return broken();
    return `${component}: ${value}`;
  });
  const base = [...lines, `"@signature-params": ${params}`].join('\n');
  if (!ed25519Verify(null, Buffer.from(base), key.key, Buffer.from(signature[1]!, 'base64'))) broken();
}

// --- the checkpoint ------------------------------------------------------------------------------

interface Checkpoint { origin: string; size: number; root: Buffer; note: string }

function noteKeyHash(name: string, raw: Buffer): Buffer {
  return sha256(Buffer.from(`${name}\n`), Buffer.of(1), raw).subarray(0, 4);
}

function readCheckpoint(note: string, keys: DirectoryKey[]): Checkpoint {
  const split = note.indexOf('\n\n');
  if (split < 0) fail('the checkpoint is not a signed note');
  const text = note.slice(0, split + 1);
  const [origin, size, root] = text.split('\n');
  if (!origin || !/^(0|[1-9]\d*)$/.test(size ?? '') || !/^[A-Za-z0-9+/]{43}=$/.test(root ?? '')) fail('the checkpoint is not a checkpoint (origin, size, root hash)');
  const signed = note.slice(split + 2).split('\n').filter(Boolean).some((line) => {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!match || match[1] !== origin) return false;
    const bytes = Buffer.from(match[2]!, 'base64');
    return keys.some((k) => bytes.length === 68 && noteKeyHash(origin!, k.raw).equals(bytes.subarray(0, 4)) && ed25519Verify(null, Buffer.from(text), k.key, bytes.subarray(4)));
  });
  if (!signed) fail("the checkpoint's signature does not verify against the key directory");
  return { origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64'), note };
}

// --- the tree ------------------------------------------------------------------------------------

/** Hashes of complete, aligned subtrees: level k holds those of 2^k leaves. */
function subtreeLevels(leaves: Buffer[]): Buffer[][] {
  const levels = [leaves];
  for (let below = leaves; below.length >= 2;) {
    below = Array.from({ length: Math.floor(below.length / 2) }, (_, i) => nodeHash(below[2 * i]!, below[2 * i + 1]!));
    levels.push(below);
  }
  return levels;
}

/** MTH(D[0:n]) of RFC 6962 §2.1, from the stored subtree hashes. */
function treeHash(levels: Buffer[][], lo: number, hi: number): Buffer {
  const n = hi - lo;
  if (n === 0) return sha256();
  if ((n & (n - 1)) === 0) return levels[Math.log2(n)]![lo / n]!;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return nodeHash(treeHash(levels, lo, lo + k), treeHash(levels, lo + k, hi));
}

function tileIndexPath(index: number): string {
  const groups: string[] = [];
  for (let n = index; ; n = Math.floor(n / 1000)) {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    if (n < 1000) break;
  }
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

/** The tiles a tree of `count` items at a level is served as: full ones, then a partial one. */
function tilesFor(count: number): { index: number; width?: number }[] {
  const tiles: { index: number; width?: number }[] = Array.from({ length: Math.floor(count / TILE_WIDTH) }, (_, index) => ({ index }));
  if (count % TILE_WIDTH) tiles.push({ index: Math.floor(count / TILE_WIDTH), width: count % TILE_WIDTH });
  return tiles;
}

async function readLog(site: string, checkpoint: Checkpoint): Promise<{ entries: Buffer[]; levels: Buffer[][] }> {
  const tileUrl = (level: string, tile: { index: number; width?: number }) =>
    `${site}/log/tile/${level}/${tileIndexPath(tile.index)}${tile.width ? `.p/${tile.width}` : ''}`;
  const entries: Buffer[] = [];
  for (const tile of tilesFor(checkpoint.size)) {
    const { body } = await fetchBytes(tileUrl('entries', tile), 'an entry bundle');
    const bundle: Buffer[] = [];
    for (let at = 0; at < body.length;) {
      const length = body.readUInt16BE(at);
      bundle.push(body.subarray(at + 2, at + 2 + length));
      at += 2 + length;
      if (at > body.length) fail(`entry bundle ${tile.index} is cut short`);
    }
    if (bundle.length !== (tile.width ?? TILE_WIDTH)) fail(`entry bundle ${tile.index} holds ${bundle.length} entries, not ${tile.width ?? TILE_WIDTH}`);
    entries.push(...bundle);
  }
  const levels = subtreeLevels(entries.map(leafHash));
  if (!treeHash(levels, 0, entries.length).equals(checkpoint.root)) fail(`the log's entries do not hash to the root of checkpoint ${checkpoint.size}`);
  // Every hash tile a client would read must agree with the tree the entries make.
  for (let level = 0, span = 1; span <= checkpoint.size; level++, span *= TILE_WIDTH) {
    const hashes = levels[Math.log2(span)]!;
    for (const tile of tilesFor(Math.floor(checkpoint.size / span))) {
      const { body } = await fetchBytes(tileUrl(String(level), tile), `hash tile ${level}/${tile.index}`);
      const first = tile.index * TILE_WIDTH;
      const expected = Buffer.concat(hashes.slice(first, first + (tile.width ?? TILE_WIDTH)));
      if (!body.equals(expected)) fail(`hash tile ${level}/${tile.index} does not match the log's entries`);
    }
  }
  return { entries, levels };
}

// --- the track record ----------------------------------------------------------------------------

interface Night { date: string; usd: number; trading_cost_usd: number | null; at_stake_usd: number | null; log_index?: number | null }
interface LogEntry { date: string; usd: number; trading_cost_usd: number | null; at_stake_usd: number | null }

/** A night that matches an entry its date's latest entry corrects: an answer cached from before the correction. */
class Superseded extends Error {}

function checkHistory(nights: Night[], entries: Buffer[]): number {
  const parsed: LogEntry[] = entries.map((entry, index) => {
    try { return JSON.parse(entry.toString('utf8')) as LogEntry; } catch { return fail(`log entry ${index} is not JSON`); }
  });
  const latest = new Map<string, number>();
  parsed.forEach((entry, index) => latest.set(entry.date, index));
  let logged = 0;
  for (const night of nights) {
    const missing = () => fail(`night ${night.date} in /api/history is not in the log`);
    const expected = latest.get(night.date);
    if (expected === undefined) {
      if (night.log_index !== null && night.log_index !== undefined) missing();
      continue;
    }
    const matches = (entry: LogEntry | undefined) => entry?.date === night.date && entry.usd === night.usd
      && entry.trading_cost_usd === night.trading_cost_usd && entry.at_stake_usd === night.at_stake_usd;
    if (night.log_index !== expected || !matches(parsed[expected])) {
      if (typeof night.log_index === 'number' && night.log_index < expected && matches(parsed[night.log_index])) throw new Superseded();
      missing();
    }
    logged++;
  }
  return logged;
}

// --- the state file ------------------------------------------------------------------------------

interface State { origin: string; size: number; root: string; checkpoint: string; seen_at: string }

function readState(file: string): State | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as State;
    if (typeof state.origin !== 'string' || !Number.isSafeInteger(state.size) || typeof state.root !== 'string') throw new Error();
    return state;
  } catch {
    return fail(`the state file ${file} is not one this verifier wrote`);
  }
}

function checkExtends(old: State, checkpoint: Checkpoint, levels: Buffer[][]): void {
  if (old.origin !== checkpoint.origin) fail(`the log's origin changed from ${old.origin} to ${checkpoint.origin} since ${old.seen_at}`);
  if (checkpoint.size < old.size || !treeHash(levels, 0, old.size).equals(Buffer.from(old.root, 'base64'))) {
    fail(`the log was rewritten: checkpoint ${checkpoint.size} does not extend checkpoint ${old.size} seen on ${old.seen_at}`);
  }
}

function saveState(file: string, checkpoint: Checkpoint): void {
  const state: State = { origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root.toString('base64'), checkpoint: checkpoint.note, seen_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') };
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(temporary, file);
}

// --- the run -------------------------------------------------------------------------------------

async function main(site: string, stateFile: string | undefined): Promise<string[]> {
  const keys = await readDirectory(site);
  const checkpoint = readCheckpoint((await fetchBytes(`${site}/log/checkpoint`, 'the checkpoint')).body.toString('utf8'), keys);
  const { entries, levels } = await readLog(site, checkpoint);
  // Whether the log still extends what an earlier run saw comes first: a rolled-back log explains
  // whatever else then fails to match.
  const old = stateFile ? readState(stateFile) : undefined;
  if (old) checkExtends(old, checkpoint, levels);

  const historyUrl = new URL('/api/history', site);
  let history: Fetched;
  let nights: Night[];
  let logged: number;
  for (let attempt = 1; ; attempt++) {
    history = await fetchBytes(historyUrl.href, '/api/history');
    try { nights = (JSON.parse(history.body.toString('utf8')) as { nights: Night[] }).nights; } catch { return fail('/api/history is not the track record'); }
    if (!Array.isArray(nights)) fail('/api/history is not the track record');
    // The nights first: a changed night is named, whatever else its change breaks. The history may
    // be cached for a few seconds longer than the checkpoint: one from before a correction is asked
    // for again, and only a night that is in no entry of its date is a failure.
    try {
      logged = checkHistory(nights, entries);
      break;
    } catch (error) {
      if (!(error instanceof Superseded) || attempt === HISTORY_ATTEMPTS) throw error instanceof Superseded ? new Failure('/api/history still serves a night its log entry was corrected from') : error;
      await new Promise((resolve) => setTimeout(resolve, HISTORY_RETRY_MS));
    }
  }
  verifyAnswer('/api/history', historyUrl, history, keys);

  const statsUrl = new URL('/api/stats', site);
  verifyAnswer('/api/stats', statsUrl, await fetchBytes(statsUrl.href, '/api/stats'), keys);

  if (stateFile) saveState(stateFile, checkpoint);
  return [
    `verified ${site}`,
    `  log ${checkpoint.origin}: checkpoint of ${checkpoint.size} entries signed by the key directory, every tile and entry matches it`,
    `  /api/history: ${nights.length} nights, ${logged} of them final and each the latest log entry for its date`,
    '  /api/stats and /api/history: signatures and content digests verify',
    ...(old ? [`  the log extends checkpoint ${old.size} seen on ${old.seen_at}`] : []),
    ...(stateFile ? [`  saved checkpoint ${checkpoint.size} to ${stateFile}`] : []),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let options: { site?: string; state?: string; help?: boolean };
  try {
    options = parseArgs({ options: { site: { type: 'string' }, state: { type: 'string' }, help: { type: 'boolean' } } }).values;
  } catch (error) {
    console.error(`verify: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    process.exit(0);
  }
  let site: string;
  try {
    site = new URL(options.site ?? DEFAULT_SITE).origin;
  } catch {
    console.error(`verify: --site must be a URL, got "${options.site}"\n${USAGE}`);
    process.exit(2);
  }
  try {
    console.log((await main(site, options.state)).join('\n'));
  } catch (error) {
    console.error(`verify: ${error instanceof Failure ? error.message : `an unexpected error: ${(error as Error).message}`}`);
    process.exit(1);
  }
}
