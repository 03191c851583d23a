// What the verifier's audit tests build, written here from the formats alone and sharing no code
// with the verifier or the service: note keys and signed notes (https://c2sp.org/signed-note) made
// with node:crypto, a log of RFC 8785 entries (by `canonicalize`), draw rule v2 computed step by
// step, and attestations of version 1 and 2.
import canonicalize from 'canonicalize';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';

export const ORIGIN = 'stats.example.com/log';

const sha256 = (...parts: (string | Uint8Array)[]): Buffer => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); };

/** An Ed25519 note key (type 0x01): its verifier key, its private key as Go's note package writes one, and a signer of bodies. */
export interface TestKey { name: string; vkey: string; skey: string; sign(body: string): string }

export function noteKey(name: string): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  // Key ID: SHA-256(name || "\n" || type || public key)[:4].
  const id = sha256(`${name}\n`, Buffer.of(0x01), raw).subarray(0, 4);
  return {
    name,
    vkey: `${name}+${id.toString('hex')}+${Buffer.concat([Buffer.of(0x01), raw]).toString('base64')}`,
    skey: `PRIVATE+KEY+${name}+${id.toString('hex')}+${Buffer.concat([Buffer.of(0x01), seed]).toString('base64')}`,
    // The body ends in a newline; a blank line, then "— <name> base64(key ID || signature)".
    sign: (body) => `${body}\n\u2014 ${name} ${Buffer.concat([id, sign(null, Buffer.from(body, 'utf8'), privateKey)]).toString('base64')}\n`,
  };
}

export const commitment = (what: string): string => sha256(what).toString('base64');
export const nonceSha256 = (nonce: string): string => sha256(nonce).toString('hex');
export const entry = (value: object): Buffer => Buffer.from(canonicalize(value)!);
export const night = (date: string, usd: number, extra: { supersedes?: number; transfers?: boolean } = {}) => entry({
  at_stake_usd: null, date, supersedes: extra.supersedes ?? null, trading_cost_usd: null,
  ...(extra.transfers === false ? {} : { transfers: commitment(`${date} ${usd}`) }), updated_at: `${date}T03:00:00Z`, usd,
});
export const wallet = (what: string, replaces: number | null) => entry({ kind: 'wallet', replaces, wallet: commitment(what) });
export const opening = (auditor: TestKey, checkpoint: number, nonce: string, chosen: number | string[]) => entry({
  auditor: auditor.vkey, checkpoint, kind: 'audit', nonce_sha256: nonceSha256(nonce), ...(typeof chosen === 'number' ? { sample: chosen } : { nights: chosen }),
});

/** The entries' JSON, for the hand-written readings below. */
const json = (raw: readonly Buffer[]) => raw.map((bytes) => JSON.parse(bytes.toString('utf8')) as Record<string, unknown>);

/** Each date's latest entry among the first `size` entries. */
export function latestWithin(raw: readonly Buffer[], size: number): Map<string, number> {
  const latest = new Map<string, number>();
  json(raw.slice(0, size)).forEach((e, i) => { if (typeof e.date === 'string') latest.set(e.date, i); });
  return latest;
}

/** Rule v2's candidates: dates whose first entry within the checkpoint follows its first wallet entry, in date order. */
export function candidates(raw: readonly Buffer[], size: number): string[] {
  const entries = json(raw.slice(0, size));
  const wallet = entries.findIndex((e) => e.kind === 'wallet');
  if (wallet < 0) return [];
  const first = new Map<string, number>();
  entries.forEach((e, i) => { if (typeof e.date === 'string' && !first.has(e.date)) first.set(e.date, i); });
  return [...first].filter(([, i]) => i > wallet).map(([d]) => d).sort();
}

/** Rule v2 step by step: h_i over the domain, root, nonce, "\n" and i (4 bytes big-endian), reduced mod (n − i) a byte at a time. */
export function drawV2(root: Buffer, nonce: string, from: readonly string[], k: number): string[] {
  const order = [...from];
  for (let i = 0; i < Math.min(k, order.length); i++) {
    const h = sha256('public-stats audit sample v2\n', root, nonce, '\n', Buffer.of(i >>> 24, (i >>> 16) & 0xff, (i >>> 8) & 0xff, i & 0xff));
    const m = order.length - i;
    let r = 0;
    for (const byte of h) r = (r * 256 + byte) % m;
    [order[i], order[i + r]] = [order[i + r]!, order[i]!];
  }
  return order.slice(0, Math.min(k, order.length)).sort();
}

export interface V2 {
  origin?: string; logKey: string; size: number; root: string; opening: number; drawn: { k: number; nonce: string } | null;
  chain?: number; payers?: string; nights: [string, number | null, 'pass' | 'fail'][]; result: 'pass' | 'fail'; date?: string;
}

export const bodyV2 = (a: V2, auditor: TestKey): string => [
  'public-stats audit attestation v2', `origin ${a.origin ?? ORIGIN}`, `log-key ${a.logKey}`, `checkpoint ${a.size} ${a.root}`, `opening ${a.opening}`,
  `chosen ${a.drawn ? `drawn ${a.drawn.k} rule v2 nonce ${a.drawn.nonce}` : 'named'}`, `chain ${a.chain ?? 137}`, `payers ${a.payers ?? sha256('[]').toString('hex')}`,
  ...a.nights.map(([date, index, result]) => `night ${date} ${index ?? '-'} ${result}`), `result ${a.result}`, `date ${a.date ?? '2026-02-01'}`, `auditor ${auditor.vkey}`, '',
].join('\n');

export const bodyV1 = (size: number, root: string, nights: string[], auditor: TestKey): string => [
  'public-stats audit attestation v1', `origin ${ORIGIN}`, `checkpoint ${size} ${root}`, 'chain 137', `nights ${nights.join(',')}`, `matched ${nights.length}`,
  'date 2026-01-20', `auditor ${auditor.vkey}`, '',
].join('\n');
