// Checks the Public Stats Service from outside, as anyone can: `node verify.ts --site URL --state FILE
// [--policy FILE] [--vkey VKEY] [--receipt FILE] [--strict]` on Node 22.18 or later with nothing
// installed (this one file imports only Node's own modules; the site serves it at /log/verify.ts). It
// is written from the standards, not from the service's code, and trusts nothing the site says about
// itself:
//
// 1. the log's key is a note verifier key (https://c2sp.org/signed-note) from --vkey, the policy's
//    `log` line, or the state file; only with none of them is the key the site names trusted, on
//    first use, printed and recorded in the state file. A checkpoint not signed by that key fails;
//    one signed by it and by the key the site now names (a rotation overlap) moves the state file to
//    the new key. The demo log (under /log/demo/ while /api/history says "demo") is signed by the
//    same key under its own origin;
// 2. the checkpoint (https://c2sp.org/tlog-checkpoint) verifies with that key, and with a policy
//    (https://c2sp.org/tlog-policy) carries cosignature/v1 lines (https://c2sp.org/tlog-cosignature)
//    of a quorum of its witnesses;
// 3. the entry bundles and hash tiles (https://c2sp.org/tlog-tiles) rebuild exactly the tree the
//    checkpoint names (RFC 6962 hashing, https://www.rfc-editor.org/rfc/rfc6962#section-2.1), and
//    every entry is RFC 8785 JSON (https://www.rfc-editor.org/rfc/rfc8785) of one night;
// 4. with --state, the checkpoint is consistent with the one an earlier run saved (RFC 9162 §2.1.4
//    consistency proofs, https://www.rfc-editor.org/rfc/rfc9162#section-2.1.4): a smaller one that is
//    a prefix is an older view, one that is not is a rewrite, and a rewrite leaves an evidence file
//    with both signed checkpoints and the failed proof; the state file keeps the newer checkpoint;
// 5. completeness both ways: every night /api/history serves is the latest log entry for its date,
//    every date in the log is a night of /api/history with the same figures, a night not yet in the
//    log comes after every night in it, every calendar gap in the log is named, and /api/stats's
//    total_usd and the daily values of final nights agree with the log to the cent;
// 6. /api/history and /api/stats carry RFC 9421 signatures (https://www.rfc-editor.org/rfc/rfc9421)
//    by a key of the key directory (Ed25519 JWKs named by their RFC 7638 thumbprints; a retired
//    key's only before its "exp"), over an RFC 9530 Content-Digest
//    (https://www.rfc-editor.org/rfc/rfc9530) of the bytes sent and a Log-Checkpoint field naming
//    the verified checkpoint or an older state of the same tree;
// 7. with a policy, every checkpoint of the archive (/log/checkpoint/<size>) is a state of the same
//    tree, and each night is witnessed on time when a checkpoint holding its first entry was
//    cosigned by the quorum by midnight UTC of its date plus 4 days, or else logged late; the
//    site's witnessed_at claims must agree, and --strict fails on a night logged late after the
//    first one witnessed on time;
// 8. --receipt checks a saved /log/proof/<date> receipt (https://c2sp.org/tlog-proof) offline with
//    the pinned key and the policy; with --site, it also says whether its night is still the latest
//    entry for its date.
//
// Any failure ends with one sentence on stderr and exit status 1; bad usage exits 2.
import { createHash, createPublicKey, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

/** The site checked when --site is not given; the copy a site serves names that site here. */
const DEFAULT_SITE = 'http://127.0.0.1:8080';
const USAGE = `Usage: node verify.ts [--site URL] [--state FILE] [--policy FILE] [--vkey VKEY] [--receipt FILE] [--strict]
  --site URL      the site to check, scheme and host only (default ${DEFAULT_SITE})
  --state FILE    the log's key and the last checkpoint seen: a later run checks the log is consistent with it, then saves the newest
  --policy FILE   a C2SP tlog-policy (https://c2sp.org/tlog-policy): the log's key, its witnesses and the quorum that must cosign
  --vkey VKEY     the log's note verifier key (https://c2sp.org/signed-note), pinned
  --receipt FILE  check a saved /log/proof/<date> receipt offline (with --site, also whether its night is still the latest for its date)
  --strict        fail on any night logged late after the first night witnessed on time
  --help          print this help`;

const TIMEOUT_MS = 20_000;
const CONCURRENCY = 6;
/** Bounds on what is read: documents, signed answers, and a log of at most 2^20 entries (2,870 years of nights). */
const MAX_DOCUMENT_BYTES = 1 << 20;
const MAX_ANSWER_BYTES = 32 << 20;
const MAX_LOG_SIZE = 1 << 20;
/** tlog-tiles: tiles of height 8, so 256 hashes or entries wide. */
const TILE_HEIGHT = 8;
const TILE_WIDTH = 1 << TILE_HEIGHT;
const HASH_SIZE = 32;
const MAX_BUNDLE_BYTES = TILE_WIDTH * (2 + 0xffff);
/** The answers' signature: found by its tag, and what it must cover (RFC 9421 §3.2.1 application requirements). */
const SIGNATURE_TAG = 'public-stats';
const REQUIRED_COMPONENTS = ['"@status"', '"content-type"', '"content-digest"', '"log-checkpoint"', '"@authority";req', '"@path";req'];
/** /api/history may be cached a little longer than the checkpoint: how often, and how far apart, both are read again. */
const ATTEMPTS = 6;
const RETRY_MS = 5_000;

class Failure extends Error {}
const fail = (sentence: string): never => { throw new Failure(sentence); };
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const utf8 = new TextDecoder('utf-8', { fatal: true });
const sha256 = (...parts: Uint8Array[]): Buffer => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); };
const isoSeconds = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

// --- HTTP ----------------------------------------------------------------------------------------

interface Answer {
  url: URL;
  status: number;
  /** Field lines by lowercase name, in order (RFC 9421 §2.1 combines them itself). */
  fields: Map<string, string[]>;
  /** The request's own fields, for components with `;req`. */
  requestFields: Map<string, string[]>;
  /** The content as sent, content coding included: what Content-Digest covers. */
  raw: Buffer;
}

const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: CONCURRENCY }),
};

function unreachable(url: URL, error: Error & { code?: string }): Failure {
  const code = error.code ?? '';
  const reason = code === 'VERIFY_TIMEOUT' ? `it did not answer within ${TIMEOUT_MS / 1000} seconds`
    : code === 'ECONNREFUSED' ? 'the connection was refused'
    : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? `the host name ${url.hostname} does not resolve`
    : code === 'ECONNRESET' || code === 'EPIPE' ? 'the connection was reset'
    : code === 'EHOSTUNREACH' || code === 'ENETUNREACH' ? 'the host is unreachable'
    : /CERT|TLS|SSL/.test(code) ? `its TLS certificate was not accepted (${code})`
    : `${error.message}${code ? ` (${code})` : ''}`;
  return new Failure(`${url.href} could not be reached: ${reason}`);
}

/** One GET, read whole up to maxBytes, within TIMEOUT_MS. Redirects are not followed: a verifier checks the site it was given. */
function get(url: URL, maxBytes: number, acceptEncoding = 'identity'): Promise<Answer> {
  const headers = { 'accept-encoding': acceptEncoding, 'user-agent': 'public-stats-verify/2' };
  const requestFields = new Map<string, string[]>([['host', [url.host]], ...Object.entries(headers).map(([k, v]): [string, string[]] => [k, [v]])]);
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const request = (https ? httpsRequest : httpRequest)(url, { method: 'GET', headers, agent: https ? agents.https : agents.http });
    let settled = false;
    const settle = (error: Failure | undefined, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) { request.destroy(); reject(error); } else resolve(answer!);
    };
    const timer = setTimeout(() => settle(unreachable(url, Object.assign(new Error('timeout'), { code: 'VERIFY_TIMEOUT' }))), TIMEOUT_MS);
    request.on('error', (error: Error) => settle(error instanceof Failure ? error : unreachable(url, error)));
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const tooLarge = () => new Failure(`${url.href} sent more than ${maxBytes} bytes, more than this verifier reads`);
      if (Number(response.headers['content-length']) > maxBytes) return settle(tooLarge());
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) settle(tooLarge());
        else chunks.push(chunk);
      });
      response.on('error', (error: Error) => settle(unreachable(url, error)));
      response.on('end', () => {
        const fields = new Map<string, string[]>();
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
          const name = response.rawHeaders[i]!.toLowerCase();
          fields.set(name, [...(fields.get(name) ?? []), response.rawHeaders[i + 1]!]);
        }
        settle(undefined, { url, status: response.statusCode ?? 0, fields, requestFields, raw: Buffer.concat(chunks) });
      });
      response.on('close', () => { if (!response.complete) settle(new Failure(`${url.href} closed the connection before its answer was complete`)); });
    });
    request.end();
  });
}

/** A field's lines combined as RFC 9110 §5.3 does, or undefined when absent. */
const fieldValue = (fields: Map<string, string[]>, name: string): string | undefined => fields.get(name)?.map((v) => v.trim()).join(', ');

function expectOk(answer: Answer, what: string): Answer {
  if (answer.status === 200) return answer;
  const location = fieldValue(answer.fields, 'location');
  return fail(`${what} (${answer.url.href}) answered HTTP ${answer.status}${location ? `, a redirect to ${location}` : ''}, not 200`);
}

/** The content with its content codings (RFC 9110 §8.4) undone, still bounded. */
function decoded(answer: Answer, what: string, maxBytes: number): Buffer {
  const codings = (fieldValue(answer.fields, 'content-encoding') ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c && c !== 'identity');
  let body = answer.raw;
  for (const coding of codings.reverse()) {
    const options = { maxOutputLength: maxBytes };
    try {
      if (coding === 'gzip' || coding === 'x-gzip') body = gunzipSync(body, options);
      else if (coding === 'br') body = brotliDecompressSync(body, options);
      else if (coding === 'deflate') { try { body = inflateSync(body, options); } catch { body = inflateRawSync(body, options); } }
      else return fail(`${what} is sent in the content coding "${coding}", which this verifier cannot read`);
    } catch (error) {
      if (error instanceof Failure) throw error;
      return fail(`${what} is not valid ${coding} data, or is larger than ${maxBytes} bytes once inflated`);
    }
  }
  return body;
}

function parseJson(bytes: Buffer, what: string): unknown {
  try { return JSON.parse(utf8.decode(bytes)); } catch { return fail(`${what} is not UTF-8 JSON`); }
}

async function eachLimited<T, R>(items: T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => { while (next < items.length) { const at = next++; results[at] = await run(items[at]!); } };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}

// --- the key directory (RFC 7517 JWKs, RFC 8037 OKP keys) ----------------------------------------

/** `retired`: when the key was retired (its JWK's "exp", unix seconds); it signs nothing created since. */
interface DirectoryKey { kid: string; raw: Buffer; key: KeyObject; retired: number | undefined }

/** RFC 7638 §3.2: SHA-256 over the required members of an OKP key, in lexicographic order, no whitespace. */
const thumbprint = (crv: string, x: string): string => sha256(Buffer.from(JSON.stringify({ crv, kty: 'OKP', x }))).toString('base64url');

async function readDirectory(site: URL): Promise<Map<string, DirectoryKey>> {
  const what = 'the key directory';
  const answer = expectOk(await get(new URL('/.well-known/http-message-signatures-directory', site), MAX_DOCUMENT_BYTES), what);
  const parsed = parseJson(decoded(answer, what, MAX_DOCUMENT_BYTES), what);
  if (!isRecord(parsed) || !Array.isArray(parsed.keys)) return fail('the key directory is not a JWK set (no "keys" list)');
  const keys = new Map<string, DirectoryKey>();
  for (const jwk of parsed.keys) {
    // Keys of other types are allowed in the set; only Ed25519 ones sign here.
    if (!isRecord(jwk) || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') continue;
    const x = jwk.x;
    if (typeof x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(x)) return fail('the key directory has an Ed25519 key whose "x" is not 32 bytes of base64url');
    const kid = thumbprint('Ed25519', x);
    if (jwk.kid !== undefined && jwk.kid !== kid) return fail(`the key directory's key "${String(jwk.kid)}" is not named by its RFC 7638 thumbprint (${kid})`);
    let key: KeyObject;
    try { key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' }); } catch { return fail(`the key directory's key ${kid} is not an Ed25519 public key`); }
    if (jwk.exp !== undefined && !Number.isSafeInteger(jwk.exp)) return fail(`the key directory's key ${kid} has an "exp" that is not a time in unix seconds`);
    keys.set(kid, { kid, raw: Buffer.from(x, 'base64url'), key, retired: jwk.exp as number | undefined });
  }
  if (keys.size === 0) fail('the key directory lists no Ed25519 key');
  return keys;
}

// --- Structured Field Values (RFC 8941, https://www.rfc-editor.org/rfc/rfc8941) ------------------

type Bare = { t: 'int' | 'dec'; v: number } | { t: 'str' | 'tok'; v: string } | { t: 'bin'; v: Buffer } | { t: 'bool'; v: boolean };
type Params = [string, Bare][];
interface Item { value: Bare; params: Params }
interface InnerList { items: Item[]; params: Params }
type Member = Item | InnerList;

const KEY = /[a-z*][a-z0-9_.*-]*/y;
const NUMBER = /-?([0-9]+)(?:\.([0-9]+))?/y;
const TOKEN = /[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/y;
const BYTES = /:([A-Za-z0-9+/=]*):/y;

/** RFC 8941 §4.2.2: a Dictionary, members in order; throws SyntaxError on anything else. */
function parseDictionary(input: string): Map<string, Member> {
  const s = input;
  let i = 0;
  const bad = (): never => { throw new SyntaxError('not a structured-field dictionary'); };
  const sticky = (re: RegExp): RegExpExecArray => { re.lastIndex = i; const m = re.exec(s) ?? bad(); i = re.lastIndex; return m; };
  const spaces = () => { while (s[i] === ' ') i++; };
  const bare = (): Bare => {
    const c = s[i] ?? '';
    if (c === '-' || (c >= '0' && c <= '9')) {
      const m = sticky(NUMBER);
      const [whole, int, frac] = [m[0], m[1]!, m[2]];
      if (frac === undefined ? int.length > 15 : int.length > 12 || frac.length > 3) bad();
      return { t: frac === undefined ? 'int' : 'dec', v: Number(whole) };
    }
    if (c === '"') {
      let out = '';
      for (i++; ; i++) {
        const ch = s[i] ?? bad();
        if (ch === '"') { i++; return { t: 'str', v: out }; }
        if (ch === '\\') { i++; const escaped = s[i]; if (escaped !== '"' && escaped !== '\\') bad(); out += escaped; continue; }
        if (ch < ' ' || ch > '~') bad();
        out += ch;
      }
    }
    if (c === ':') return { t: 'bin', v: Buffer.from(sticky(BYTES)[1]!, 'base64') };
    if (c === '?') { const b = s[i + 1]; if (b !== '0' && b !== '1') bad(); i += 2; return { t: 'bool', v: b === '1' }; }
    if (/[A-Za-z*]/.test(c)) return { t: 'tok', v: sticky(TOKEN)[0] };
    return bad();
  };
  const params = (): Params => {
    const out: Params = [];
    while (s[i] === ';') {
      i++;
      spaces();
      const name = sticky(KEY)[0];
      let value: Bare = { t: 'bool', v: true };
      if (s[i] === '=') { i++; value = bare(); }
      const at = out.findIndex(([n]) => n === name);
      if (at >= 0) out[at] = [name, value]; else out.push([name, value]);
    }
    return out;
  };
  const item = (): Item => ({ value: bare(), params: params() });
  const member = (): Member => {
    if (s[i] !== '(') return item();
    i++;
    const items: Item[] = [];
    for (;;) {
      spaces();
      if (s[i] === ')') { i++; return { items, params: params() }; }
      items.push(item());
      if (s[i] !== ' ' && s[i] !== ')') bad();
    }
  };
  const members = new Map<string, Member>();
  spaces();
  while (i < s.length) {
    const name = sticky(KEY)[0];
    if (s[i] === '=') { i++; members.set(name, member()); } else members.set(name, { value: { t: 'bool', v: true }, params: params() });
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) break;
    if (s[i] !== ',') bad();
    i++;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) bad();
  }
  return members;
}

/** RFC 8941 §4.1: the strict serializations. */
function serializeBare(b: Bare): string {
  switch (b.t) {
    case 'int': return String(b.v);
    case 'dec': { const r = Math.round(b.v * 1000) / 1000; return Number.isInteger(r) ? `${r}.0` : String(r); }
    case 'str': return `"${b.v.replace(/[\\"]/g, '\\$&')}"`;
    case 'tok': return b.v;
    case 'bin': return `:${b.v.toString('base64')}:`;
    case 'bool': return b.v ? '?1' : '?0';
  }
}
const serializeParams = (params: Params): string => params.map(([name, v]) => (v.t === 'bool' && v.v ? `;${name}` : `;${name}=${serializeBare(v)}`)).join('');
const serializeItem = (item: Item): string => serializeBare(item.value) + serializeParams(item.params);
const serializeMember = (m: Member): string => ('items' in m ? `(${m.items.map(serializeItem).join(' ')})${serializeParams(m.params)}` : serializeItem(m));
const serializeDictionary = (d: Map<string, Member>): string =>
  [...d].map(([name, m]) => (!('items' in m) && m.value.t === 'bool' && m.value.v ? name + serializeParams(m.params) : `${name}=${serializeMember(m)}`)).join(', ');
const param = (params: Params, name: string): Bare | undefined => params.find(([n]) => n === name)?.[1];

// --- RFC 9421 answer signatures over an RFC 9530 Content-Digest ----------------------------------

/** Fields known to be Dictionaries, so `;sf` and `;key` can re-serialize them (RFC 9421 §2.1.1, §2.1.2). */
const DICTIONARY_FIELDS = new Set(['content-digest', 'repr-digest', 'want-content-digest', 'want-repr-digest', 'signature', 'signature-input', 'log-checkpoint']);
const COMPONENT_PARAMS = new Set(['req', 'sf', 'key', 'bs', 'tr', 'name']);

class Rejected extends Error {}
const reject = (why: string): never => { throw new Rejected(why); };

/** The value of one covered component (RFC 9421 §2.1, §2.2, §2.4) of an answer to our GET. */
function componentValue(component: Item, answer: Answer): string {
  const id = serializeItem(component);
  if (component.value.t !== 'str') return reject(`a covered component, ${id}, is not a string`);
  const name = component.value.v;
  for (const [p] of component.params) if (!COMPONENT_PARAMS.has(p)) reject(`its component ${id} has a parameter this verifier does not know`);
  const flag = (p: string) => { const v = param(component.params, p); if (v && (v.t !== 'bool' || !v.v)) reject(`its component ${id} has a malformed "${p}"`); return v !== undefined; };
  const [req, sf, bs, tr] = [flag('req'), flag('sf'), flag('bs'), flag('tr')];
  const key = param(component.params, 'key');
  const queryName = param(component.params, 'name');
  if (name.startsWith('@')) {
    if (sf || bs || tr || key) reject(`its component ${id} puts field parameters on a derived component`);
    if (queryName && name !== '@query-param') reject(`its component ${id} has a parameter that does not apply to it`);
    if (name === '@status') return req ? reject('it covers "@status";req, but a request has no status') : String(answer.status);
    if (!req) return reject(`it covers ${id} of the response, but that component exists only for a request`);
    const url = answer.url;
    switch (name) {
      case '@method': return 'GET';
      case '@target-uri': return url.href;
      case '@authority': return url.host; // WHATWG URL: host lowercase, default port omitted (RFC 9110 §4.2.3)
      case '@scheme': return url.protocol.slice(0, -1);
      case '@request-target': return url.pathname + url.search;
      case '@path': return url.pathname || '/';
      case '@query': return url.search || '?';
      case '@query-param': {
        if (queryName?.t !== 'str') return reject(`its component ${id} names no query parameter`);
        const values = new URLSearchParams(url.search).getAll(queryName.v);
        return values.length === 1 ? values[0]! : reject(`its component ${id} is not exactly one query parameter of the request`);
      }
      default: return reject(`it covers ${id}, a derived component this verifier does not know`);
    }
  }
  if (queryName || name !== name.toLowerCase() || !/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(name)) reject(`its component ${id} is not a lowercase field name`);
  if (tr) reject(`it covers the trailer ${id}, which this verifier does not read`);
  if (bs && (sf || key)) reject(`its component ${id} has parameters that do not go together`);
  const lines = (req ? answer.requestFields : answer.fields).get(name) ?? reject(`the field ${name} it covers is missing`);
  const values = lines.map((v) => v.replace(/^[ \t]+|[ \t]+$/g, ''));
  if (bs) return values.map((v) => `:${Buffer.from(v, 'latin1').toString('base64')}:`).join(', ');
  if (sf || key) {
    if (!DICTIONARY_FIELDS.has(name)) reject(`its component ${id} asks for a structured serialization of a field this verifier cannot parse`);
    let dictionary: Map<string, Member>;
    try { dictionary = parseDictionary(values.join(', ')); } catch { return reject(`the field ${name} is not a structured-field dictionary`); }
    if (!key) return serializeDictionary(dictionary);
    if (key.t !== 'str') return reject(`its component ${id} has a malformed "key"`);
    const member = dictionary.get(key.v) ?? reject(`the field ${name} has no member "${key.v}"`);
    return serializeMember(member);
  }
  return values.join(', ');
}

interface Signed { kid: string; created: number; retired: number | undefined }

function verifyCandidate(input: InnerList, signature: Member | undefined, answer: Answer, keys: Map<string, DirectoryKey>): Signed {
  if (!signature || 'items' in signature || signature.value.t !== 'bin') return reject('its Signature field has no byte sequence under the same label');
  const identifiers = input.items.map(serializeItem);
  // Identifiers are equal whatever the order of their parameters (RFC 9421 §2).
  const canonical = input.items.map((c) => serializeBare(c.value) + serializeParams([...c.params].sort(([a], [b]) => (a < b ? -1 : 1))));
  if (new Set(canonical).size !== canonical.length) reject('it covers a component twice');
  if (input.items.some((c) => c.value.t === 'str' && c.value.v === '@signature-params')) reject('it lists "@signature-params" among its components');
  const required = answer.url.search ? [...REQUIRED_COMPONENTS, '"@query";req'] : REQUIRED_COMPONENTS;
  const missing = required.filter((r) => !identifiers.includes(r));
  if (missing.length) reject(`it does not cover ${missing.join(' and ')}`);
  const alg = param(input.params, 'alg');
  if (alg && (alg.t !== 'str' || alg.v !== 'ed25519')) reject(`its algorithm is ${serializeBare(alg)}, not "ed25519"`);
  const created = param(input.params, 'created');
  if (created?.t !== 'int') return reject('it has no integer "created" time');
  const expires = param(input.params, 'expires');
  if (expires && (expires.t !== 'int' || expires.v * 1000 < Date.now())) reject(`it expired (expires=${serializeBare(expires)})`);
  const keyid = param(input.params, 'keyid');
  if (keyid?.t !== 'str') return reject('it names no key ("keyid")');
  const key = keys.get(keyid.v) ?? reject(`its key ${keyid.v} is not in the key directory`);
  if (key.retired !== undefined && created.v >= key.retired) {
    reject(`it was created at ${isoSeconds(new Date(created.v * 1000))}, after its key ${key.kid} was retired at ${isoSeconds(new Date(key.retired * 1000))}`);
  }
  // RFC 9421 §2.5: one line per covered component, then the signature parameters, no final newline.
  const values = input.items.map((c) => componentValue(c, answer));
  if (values.some((v) => /[\r\n]/.test(v))) reject('a covered component has a line break in its value');
  const base = [...values.map((v, i) => `${identifiers[i]}: ${v}\n`), `"@signature-params": ${serializeMember(input)}`].join('');
  // Field values reach us as Latin-1 strings of their bytes: encode them back to those bytes.
  const ok = signature.value.v.length === 64 && verifyEd25519(null, Buffer.from(base, 'latin1'), key.key, signature.value.v);
  if (!ok) reject(`the Ed25519 signature by key ${key.kid} does not match what it covers`);
  return { kid: key.kid, created: created.v, retired: key.retired };
}

function verifyAnswer(path: string, answer: Answer, keys: Map<string, DirectoryKey>): Signed {
  const broken = (why: string): never => fail(`the signature of ${path} does not verify: ${why}`);
  // RFC 9530 §2: the digest of the content as sent; sha-256 and sha-512 are checked, other algorithms ignored.
  const digestField = fieldValue(answer.fields, 'content-digest') ?? broken('it has no Content-Digest');
  let digests: Map<string, Member>;
  try { digests = parseDictionary(digestField); } catch { return broken('its Content-Digest is not a structured-field dictionary'); }
  let digested = 0;
  for (const [label, algorithm] of [['sha-256', 'sha256'], ['sha-512', 'sha512']] as const) {
    const member = digests.get(label);
    if (!member) continue;
    if ('items' in member || member.value.t !== 'bin') broken(`its Content-Digest ${label} is not a byte sequence`);
    else if (!member.value.v.equals(createHash(algorithm).update(answer.raw).digest())) broken('its Content-Digest does not match the body');
    digested++;
  }
  if (!digested) broken('its Content-Digest has neither sha-256 nor sha-512');

  let inputs: Map<string, Member>;
  let signatures: Map<string, Member>;
  try {
    inputs = parseDictionary(fieldValue(answer.fields, 'signature-input') ?? broken('it has no Signature-Input'));
    signatures = parseDictionary(fieldValue(answer.fields, 'signature') ?? broken('it has no Signature'));
  } catch (error) {
    if (error instanceof Failure) throw error;
    return broken('its Signature-Input or Signature is not a structured-field dictionary');
  }
  // RFC 9421 §3.2 step 1: the verifier picks the signatures its application defines, here by tag.
  const candidates = [...inputs].filter((entry): entry is [string, InnerList] => {
    const tag = 'items' in entry[1] ? param(entry[1].params, 'tag') : undefined;
    return tag?.t === 'str' && tag.v === SIGNATURE_TAG;
  });
  if (!candidates.length) broken(`it carries no signature tagged "${SIGNATURE_TAG}"`);
  let reason = '';
  for (const [label, input] of candidates) {
    try { return verifyCandidate(input, signatures.get(label), answer, keys); } catch (error) {
      if (!(error instanceof Rejected)) throw error;
      reason ||= error.message;
    }
  }
  return broken(reason);
}

// --- signed notes, their keys, and cosignatures --------------------------------------------------

/** signed-note signature types: Ed25519 (the log's checkpoints) and timestamped Ed25519 (a witness's cosignature/v1). */
const ED25519_NOTE = 0x01;
const COSIGNATURE_V1 = 0x04;

/** A note verifier key (https://c2sp.org/signed-note#verifier-keys). */
interface NoteKey { name: string; id: Buffer; type: number; raw: Buffer; key: KeyObject }

/** signed-note: key ID = SHA-256(key name || 0x0A || signature type || public key)[:4]. */
const noteKeyId = (name: string, type: number, raw: Uint8Array): Buffer => sha256(Buffer.from(`${name}\n`, 'utf8'), Buffer.of(type), raw).subarray(0, 4);
/** Key names are non-empty, without Unicode spaces or "+". */
const validKeyName = (name: string): boolean => name !== '' && !/[\s+]/u.test(name);
const vkeyOf = (k: NoteKey): string => `${k.name}+${k.id.toString('hex')}+${Buffer.concat([Buffer.of(k.type), k.raw]).toString('base64')}`;
/** The same public key under another name: the demo log's origin. */
const renamed = (k: NoteKey, name: string): NoteKey => ({ ...k, name, id: noteKeyId(name, k.type, k.raw) });
const hex2 = (byte: number | undefined): string => (byte ?? 0).toString(16).padStart(2, '0');

/** The key a vkey (`<name>+<hex key ID>+<base64(type || key)>`) of the given type names, or what is wrong with it. */
export function parseVkey(vkey: string, type: number): NoteKey | string {
  // The name and key ID hold no "+"; the base64 key may.
  const parts = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(vkey);
  if (!parts) return 'it is not <name>+<key ID>+<key>';
  const [, name, hex, b64] = parts as unknown as [string, string, string, string];
  if (!validKeyName(name)) return 'its name is empty or holds a space';
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) return 'its key ID is not 8 hexadecimal digits';
  const data = Buffer.from(b64, 'base64');
  if (data.length === 0 || data.toString('base64') !== b64) return 'its key is not base64';
  if (data[0] !== type) return `its signature type is 0x${hex2(data[0])}, not 0x${hex2(type)}`;
  if (data.length !== 33) return 'its Ed25519 public key is not 32 bytes';
  const raw = data.subarray(1);
  const id = noteKeyId(name, type, raw);
  if (id.toString('hex') !== hex.toLowerCase()) return 'its key ID does not match its name and key';
  try {
    return { name, id, type, raw, key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' }) };
  } catch {
    return 'its key is not an Ed25519 public key';
  }
}

interface NoteSignature { name: string; id: Buffer; bytes: Buffer }
interface Note { text: string; signatures: NoteSignature[] }

/** signed-note: UTF-8 text ending in a newline, a blank line, then lines "— <key name> base64(key ID || signature)". */
function parseNote(note: string, what: string): Note {
  const notNote = (): never => fail(`${what} is not a signed note (https://c2sp.org/signed-note)`);
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) notNote();
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) notNote();
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > 100) fail(`${what} carries more than 100 signatures`);
  const signatures = lines.map((line) => {
    const match = /^\u2014 ([^ ]+) ([A-Za-z0-9+/]+={0,2})$/.exec(line) ?? notNote();
    const bytes = Buffer.from(match[2]!, 'base64');
    if (!validKeyName(match[1]!) || bytes.length < 5 || bytes.toString('base64') !== match[2]) notNote();
    return { name: match[1]!, id: bytes.subarray(0, 4), bytes: bytes.subarray(4) };
  });
  return { text: note.slice(0, split + 1), signatures };
}

/** signed-note: a signature by a known key (same name and key ID) must verify; true when one did. */
function signedBy(note: Note, key: NoteKey, what: string): boolean {
  let signed = false;
  for (const s of note.signatures) {
    if (s.name !== key.name || !s.id.equals(key.id)) continue;
    if (s.bytes.length !== 64 || !verifyEd25519(null, Buffer.from(note.text, 'utf8'), key.key, s.bytes)) fail(`${what}'s signature by the log key ${vkeyOf(key)} does not verify`);
    signed = true;
  }
  return signed;
}

interface Checkpoint extends Note { origin: string; size: number; root: Buffer; note: string }

function parseCheckpoint(note: string, what: string): Checkpoint {
  const parsed = parseNote(note, what);
  const lines = parsed.text.slice(0, -1).split('\n');
  const [origin, size, root] = lines;
  if (lines.length < 3 || lines.some((line) => line === '') || !/^(0|[1-9][0-9]*)$/.test(size ?? '') || !/^[A-Za-z0-9+/]{43}=$/.test(root ?? '')) {
    fail(`${what} is not a checkpoint (https://c2sp.org/tlog-checkpoint): it needs an origin, a tree size and a root hash`);
  }
  if (Number(size) > MAX_LOG_SIZE) fail(`${what}'s tree size ${size} is more than the ${MAX_LOG_SIZE} entries this verifier reads`);
  return { ...parsed, origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64'), note };
}

/** The checkpoint, signed by one of the pinned log keys under its origin (tlog-policy: a log key's name is its origin). */
function readCheckpoint(note: string, what: string, keys: NoteKey[]): Checkpoint & { key: NoteKey } {
  const checkpoint = parseCheckpoint(note, what);
  const mine = keys.filter((k) => k.name === checkpoint.origin);
  const key = mine.find((k) => signedBy(checkpoint, k, what));
  if (key) return { ...checkpoint, key };
  if (!mine.length) return fail(`${what} is for the log "${checkpoint.origin}", not the one the pinned log key ${keys.map(vkeyOf).join(' or ')} signs for`);
  const pinned = mine.map(vkeyOf).join(' or ');
  if (checkpoint.signatures.some((s) => s.name === checkpoint.origin)) {
    return fail(`${what} is signed by another log key than the pinned one (${pinned}): a new key is trusted only from a checkpoint the pinned key signs too`);
  }
  return fail(`${what} carries no signature by the pinned log key ${pinned}`);
}

/** tlog-cosignature: the time of the witness's cosignature/v1 on the checkpoint, or undefined; one that does not verify fails. */
export function cosignedAt(checkpoint: Note, witness: NoteKey, what: string): number | undefined {
  let earliest: number | undefined;
  for (const s of checkpoint.signatures) {
    if (s.name !== witness.name || !s.id.equals(witness.id)) continue;
    // timestamped_signature: a big-endian u64 POSIX time (at most 2^63 - 1), then the Ed25519 signature.
    const time = s.bytes.length === 72 ? s.bytes.readBigUInt64BE(0) : -1n;
    const message = Buffer.from(`cosignature/v1\ntime ${time}\n${checkpoint.text}`, 'utf8');
    if (time < 0n || time >= 1n << 63n || !verifyEd25519(null, message, witness.key, s.bytes.subarray(8))) {
      fail(`${what}'s cosignature by the witness ${witness.name} does not verify`);
    }
    earliest = Math.min(earliest ?? Infinity, Number(time));
  }
  return earliest;
}

// --- the policy (https://c2sp.org/tlog-policy) ---------------------------------------------------

interface Group { k: number; members: string[] }
export interface Policy { logs: NoteKey[]; witnesses: Map<string, NoteKey>; groups: Map<string, Group>; quorum: string }

export function parsePolicy(bytes: Buffer, file: string): Policy {
  const wrong = (line: number, why: string): never => fail(`the policy ${file} is not a C2SP tlog-policy: line ${line} ${why}`);
  // Tab, newline, printable ASCII and any octet with the high bit set; the rest read as UTF-8.
  const control = bytes.findIndex((b) => b < 0x20 ? b !== 0x09 && b !== 0x0a : b === 0x7f);
  if (control >= 0) wrong(bytes.subarray(0, control).filter((b) => b === 0x0a).length + 1, 'holds a control character');
  let text: string;
  try { text = utf8.decode(bytes); } catch { return fail(`the policy ${file} is not UTF-8, the only encoding of names this verifier reads`); }
  const policy: Policy = { logs: [], witnesses: new Map(), groups: new Map(), quorum: '' };
  const defined = (name: string) => name === 'none' || policy.witnesses.has(name) || policy.groups.has(name);
  let quorumLine = 0;
  for (const [at, line] of text.split('\n').entries()) {
    const n = at + 1;
    const words = line.split(/[ \t]+/).filter((w) => w !== '');
    const [keyword, ...args] = words;
    if (keyword === undefined || keyword.startsWith('#')) continue;
    const fresh = (name: string) => { if (defined(name)) wrong(n, `defines "${name}", a name already defined`); };
    const key = (vkey: string, type: number, what: string): NoteKey => {
      const parsed = parseVkey(vkey, type);
      return typeof parsed === 'string' ? wrong(n, `has a ${what} key that is not a vkey of type 0x${hex2(type)}: ${parsed}`) : parsed;
    };
    if (keyword === 'log') {
      if (args.length < 1 || args.length > 2) wrong(n, 'is not "log <vkey> [<url>]"');
      const log = key(args[0]!, ED25519_NOTE, 'log');
      if (policy.logs.some((l) => l.raw.equals(log.raw))) wrong(n, 'lists a log key a second time');
      policy.logs.push(log);
    } else if (keyword === 'witness') {
      if (args.length < 2 || args.length > 3) wrong(n, 'is not "witness <name> <vkey> [<url>]"');
      fresh(args[0]!);
      const witness = key(args[1]!, COSIGNATURE_V1, 'witness');
      if ([...policy.witnesses.values()].some((w) => w.raw.equals(witness.raw))) wrong(n, 'lists a witness key a second time');
      policy.witnesses.set(args[0]!, witness);
    } else if (keyword === 'group') {
      if (args.length < 3) wrong(n, 'is not "group <name> all|any|<k> <name>..."');
      const [name, threshold, ...members] = args as [string, string, ...string[]];
      fresh(name);
      for (const [i, member] of members.entries()) {
        if (member === 'none' || !defined(member)) wrong(n, `names "${member}", which no earlier line defines as a witness or group`);
        if (members.indexOf(member) !== i) wrong(n, `lists "${member}" twice`);
      }
      const k = threshold === 'all' ? members.length : threshold === 'any' ? 1 : /^[1-9][0-9]*$/.test(threshold) ? Number(threshold) : 0;
      if (k < 1 || k > members.length) wrong(n, `has the threshold "${threshold}", not all, any or a number from 1 to ${members.length}`);
      policy.groups.set(name, { k, members });
    } else if (keyword === 'quorum') {
      if (args.length !== 1) wrong(n, 'is not "quorum <name>"');
      if (quorumLine) wrong(n, `is a second quorum line (the first is line ${quorumLine})`);
      if (!defined(args[0]!)) wrong(n, `names "${args[0]}", which no earlier line defines`);
      policy.quorum = args[0]!;
      quorumLine = n;
    } else {
      wrong(n, `starts with "${keyword}", not log, witness, group or quorum`);
    }
  }
  if (!quorumLine) fail(`the policy ${file} is not a C2SP tlog-policy: it has no quorum line`);
  return policy;
}

/** Whether the named witness or group (the quorum by default) witnessed, given the witnesses that cosigned: k of its n members. */
export function quorumMet(policy: Policy, cosigned: Set<string>, name = policy.quorum): boolean {
  if (name === 'none') return true;
  const group = policy.groups.get(name);
  if (!group) return cosigned.has(name);
  return group.members.filter((member) => quorumMet(policy, cosigned, member)).length >= group.k;
}

/** When the quorum had cosigned: the earliest cosignature time by which the witnesses that had cosigned satisfy it. */
export function quorumTime(policy: Policy, times: Map<string, number>): number | undefined {
  const cosigned = new Set<string>();
  for (const [name, time] of [...times].sort((a, b) => a[1] - b[1])) {
    cosigned.add(name);
    if (quorumMet(policy, cosigned)) return time;
  }
  return undefined;
}

/** The policy's witnesses that cosigned the checkpoint, with the time of each one's cosignature. */
function cosignatures(policy: Policy, checkpoint: Note, what: string): Map<string, number> {
  const times = new Map<string, number>();
  for (const [name, key] of policy.witnesses) {
    const time = cosignedAt(checkpoint, key, what);
    if (time !== undefined) times.set(name, time);
  }
  return times;
}

function checkQuorum(policy: Policy, checkpoint: Checkpoint, what: string): Map<string, number> {
  const times = cosignatures(policy, checkpoint, what);
  if (!quorumMet(policy, new Set(times.keys()))) {
    fail(`${what} of ${checkpoint.size} entries is not cosigned by the policy's quorum "${policy.quorum}" (cosigned by ${[...times.keys()].join(', ') || 'no witness of the policy'})`);
  }
  return times;
}

// --- the tree ------------------------------------------------------------------------------------

export const leafHash = (entry: Uint8Array): Buffer => sha256(Buffer.of(0x00), entry);
const nodeHash = (left: Uint8Array, right: Uint8Array): Buffer => sha256(Buffer.of(0x01), left, right);

/** levels[k][j] = MTH of the complete subtree of leaves [j·2^k, (j+1)·2^k). */
export function subtreeLevels(leaves: Buffer[]): Buffer[][] {
  const levels = [leaves];
  for (let below = leaves; below.length >= 2;) {
    const above: Buffer[] = [];
    for (let j = 0; j + 1 < below.length; j += 2) above.push(nodeHash(below[j]!, below[j + 1]!));
    levels.push(above);
    below = above;
  }
  return levels;
}

/** MTH(D[lo:hi]) of RFC 6962 §2.1, splitting at the largest power of two below the width. */
function treeHash(levels: Buffer[][], lo: number, hi: number): Buffer {
  const n = hi - lo;
  if (n === 0) return sha256();
  if ((n & (n - 1)) === 0) return levels[Math.log2(n)]![lo / n]!;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return nodeHash(treeHash(levels, lo, lo + k), treeHash(levels, lo + k, hi));
}

/** RFC 6962 §2.1.2: PROOF(m, D[n]), the consistency proof from the tree's first m leaves to its first n. */
export function consistencyProof(levels: Buffer[][], m: number, n: number): Buffer[] {
  const subproof = (lo: number, hi: number, k: number, whole: boolean): Buffer[] => {
    if (k === hi - lo) return whole ? [] : [treeHash(levels, lo, hi)];
    let split = 1;
    while (split * 2 < hi - lo) split *= 2;
    return k <= split
      ? [...subproof(lo, lo + split, k, whole), treeHash(levels, lo + split, hi)]
      : [...subproof(lo + split, hi, k - split, false), treeHash(levels, lo, lo + split)];
  };
  return m === 0 || m >= n ? [] : subproof(0, n, m, true);
}

/** RFC 9162 §2.1.4.2: whether the proof shows the tree of size m and root first is a prefix of the one of size n and root second. */
export function verifyConsistency(m: number, n: number, first: Buffer, second: Buffer, proof: Buffer[]): boolean {
  if (m > n) return false;
  if (m === n) return proof.length === 0 && first.equals(second);
  if (m === 0) return proof.length === 0;
  const path = (m & (m - 1)) === 0 ? [first, ...proof] : proof;
  if (!proof.length) return false;
  let fn = m - 1;
  let sn = n - 1;
  while (fn & 1) { fn >>= 1; sn >>= 1; }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!(fn & 1) && fn !== 0) { fn >>= 1; sn >>= 1; }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(first) && sr.equals(second);
}

/** RFC 9162 §2.1.3.2: whether the inclusion proof puts the leaf at the index of the tree of that size and root. */
export function verifyInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      r = nodeHash(p, r);
      while (!(fn & 1) && fn !== 0) { fn >>= 1; sn >>= 1; }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(root);
}

// --- tiles (https://c2sp.org/tlog-tiles) ---------------------------------------------------------

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
async function readTree(site: URL, prefix: string, size: number, cache: Map<string, Buffer>): Promise<{ entries: Buffer[]; levels: Buffer[][]; tiles: number }> {
  const bundles = await eachLimited(tilesOf('entries', size), async (tile) => {
    const { body, width, path } = await readTile(site, prefix, tile, cache);
    return bundleEntries(body, width, path).slice(0, tile.width);
  });
  const entries = bundles.flat();
  return { entries, levels: subtreeLevels(entries.map(leafHash)), tiles: bundles.length };
}

interface Log { checkpoint: Checkpoint; prefix: string; entries: Buffer[]; levels: Buffer[][]; tiles: number }

async function readLog(site: URL, prefix: string, checkpoint: Checkpoint, cache: Map<string, Buffer>): Promise<Log> {
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

// --- the entries and the track record -------------------------------------------------------------

interface Entry { index: number; date: string; usd: number; trading_cost_usd: number | null; at_stake_usd: number | null; supersedes: number | null }

/** RFC 8785: ECMAScript number and string serialization, object members sorted by UTF-16 code units. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const DAY_SECONDS = 86_400;
const numberOrNull = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isFinite(v));
const midnight = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000;
const dateOf = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);
/** The log holds amounts at full precision and the answers round them to cents: equal when they round alike. */
const sameCents = (a: number | null, b: unknown): boolean => (a === null ? b === null : typeof b === 'number' && Math.abs(a - b) < 0.005 + 1e-9);

function parseEntry(bytes: Buffer, index: number): Entry {
  const parsed = parseJson(bytes, `log entry ${index}`);
  if (canonicalJson(parsed) !== bytes.toString('utf8')) fail(`log entry ${index} is not RFC 8785 canonical JSON`);
  if (!isRecord(parsed) || typeof parsed.date !== 'string' || !DATE.test(parsed.date) || typeof parsed.usd !== 'number'
    || !numberOrNull(parsed.trading_cost_usd) || !numberOrNull(parsed.at_stake_usd) || typeof parsed.updated_at !== 'string'
    || !(parsed.supersedes === null || (Number.isSafeInteger(parsed.supersedes) && (parsed.supersedes as number) >= 0))) {
    return fail(`log entry ${index} is not a night (date, usd, trading_cost_usd, at_stake_usd, supersedes, updated_at)`);
  }
  return { index, date: parsed.date, usd: parsed.usd, trading_cost_usd: parsed.trading_cost_usd, at_stake_usd: parsed.at_stake_usd, supersedes: parsed.supersedes as number | null };
}

function readEntries(raw: Buffer[]): Entry[] {
  const latest = new Map<string, number>();
  return raw.map((bytes, index) => {
    const entry = parseEntry(bytes, index);
    // A correction names the entry it replaces: the previous one for its date.
    const previous = latest.get(entry.date) ?? null;
    if (entry.supersedes !== previous) {
      fail(`log entry ${index} for ${entry.date} supersedes ${entry.supersedes ?? 'nothing'}, but the previous entry for that date is ${previous ?? 'none'}`);
    }
    latest.set(entry.date, index);
    return entry;
  });
}

/** Each date's latest entry, in date order. */
const latestByDate = (entries: Entry[]): Map<string, Entry> =>
  new Map([...entries].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.index - b.index)).map((e) => [e.date, e]));

/** A difference that caches explain (an answer, or the checkpoint, read before the other moved): read both again. */
class Stale extends Error {}

interface Night { date: string; usd: number; log_index: number | null; witnessed_at: unknown; witnessed_on_time: unknown }

/**
 * Completeness both ways, against the log as it stood when /api/history was computed: every night
 * carries the index of the latest entry for its date with that entry's figures, or null when its
 * date has no entry yet, and then comes after every night in the log; every date of the log is a
 * night.
 */
function checkNights(history: Record<string, unknown>, entries: Entry[]): Night[] {
  if (!Array.isArray(history.nights)) fail('/api/history is not the track record (no "nights" list)');
  const latest = latestByDate(entries);
  const lastLogged = [...latest.keys()].at(-1);
  const nights: Night[] = [];
  let stale: string | undefined;
  for (const night of history.nights as unknown[]) {
    if (!isRecord(night) || typeof night.date !== 'string' || typeof night.usd !== 'number') return fail('/api/history has a night without a date and a payout');
    const date = night.date;
    if (nights.some((n) => n.date === date)) fail(`/api/history serves night ${date} twice`);
    const index = night.log_index ?? null;
    const entry = latest.get(date);
    nights.push({ date, usd: night.usd, log_index: index as number | null, witnessed_at: night.witnessed_at, witnessed_on_time: night.witnessed_on_time });
    if (index === null && entry === undefined) {
      if (lastLogged !== undefined && date < lastLogged) stale ??= `night ${date} in /api/history is not in the log, though later nights are (even after waiting for caches)`;
      continue;
    }
    const same = entry !== undefined && index === entry.index && sameCents(entry.usd, night.usd)
      && sameCents(entry.trading_cost_usd, night.trading_cost_usd) && sameCents(entry.at_stake_usd, night.at_stake_usd);
    if (!same) fail(`night ${date} in /api/history is not in the log`);
  }
  for (const [date, entry] of latest) {
    if (!nights.some((n) => n.date === date)) fail(`night ${date} is in the log (entry ${entry.index}) but missing from /api/history`);
  }
  if (stale) throw new Stale(stale);
  return nights;
}

/** Dates as ranges: "2026-01-03, 2026-01-05..2026-01-07". */
function ranges(dates: string[]): string {
  const out: string[] = [];
  for (let i = 0; i < dates.length;) {
    let j = i;
    while (j + 1 < dates.length && midnight(dates[j + 1]!) - midnight(dates[j]!) === DAY_SECONDS) j++;
    out.push(i === j ? dates[i]! : `${dates[i]}..${dates[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

/** The calendar dates from since to the last night in the log that have no entry. */
function gaps(since: string, logged: Map<string, Entry>): string[] {
  const last = [...logged.keys()].at(-1);
  const missing: string[] = [];
  if (last === undefined) return missing;
  for (let day = midnight(since); day <= midnight(last); day += DAY_SECONDS) if (!logged.has(dateOf(day))) missing.push(dateOf(day));
  return missing;
}

/** /api/stats's figures that the log determines: the all-time total, given the nights not yet final, and the final nights' daily values. */
function checkStats(stats: Record<string, unknown>, nights: Night[], entries: Entry[]): string {
  const latest = latestByDate(entries);
  const lastLogged = [...latest.keys()].at(-1);
  const pending = nights.filter((n) => !latest.has(n.date));
  const expected = [...latest.values()].reduce((sum, e) => sum + e.usd, 0) + pending.reduce((sum, n) => sum + n.usd, 0);
  const total = stats.total_usd;
  // Each night not yet final is rounded to cents, and so is the total.
  const tolerance = 0.005 * (pending.length + 1) + 1e-6;
  if (total === null ? nights.length > 0 : typeof total !== 'number' || Math.abs(total - expected) > tolerance) {
    fail(`/api/stats says the all-time total is ${String(total)} USD, but the log's ${latest.size} nights and the ${pending.length} nights not yet final in /api/history add up to ${expected.toFixed(2)} USD`);
  }
  if (!Array.isArray(stats.daily)) fail('/api/stats is not the stats record (no "daily" list)');
  for (const day of stats.daily as unknown[]) {
    if (!isRecord(day) || typeof day.date !== 'string') return fail('/api/stats has a daily value without a date');
    const entry = latest.get(day.date);
    if (entry && !sameCents(entry.usd, day.usd)) fail(`/api/stats says night ${day.date} paid ${String(day.usd)} USD, but the log says ${entry.usd}`);
    if (!entry && lastLogged !== undefined && day.date < lastLogged) fail(`/api/stats lists night ${day.date}, which is not in the log though later nights are`);
  }
  return `  /api/stats: the all-time total ${String(total)} USD and the daily values of final nights agree with the log to the cent`;
}

/**
 * The Log-Checkpoint field of a signed answer (an RFC 8941 Dictionary: origin, size, root): the tree
 * the answer was computed against, which must be the verified checkpoint or an older state of its
 * tree. Returns its size.
 */
function answerCheckpoint(path: string, answer: Answer, log: Log): number {
  const field = fieldValue(answer.fields, 'log-checkpoint') ?? fail(`${path} carries no Log-Checkpoint field naming the log state it was computed against`);
  let members: Map<string, Member> | undefined;
  try { members = parseDictionary(field); } catch { members = undefined; }
  const bare = (name: string) => { const m = members?.get(name); return m && !('items' in m) ? m.value : undefined; };
  const [origin, size, root] = [bare('origin'), bare('size'), bare('root')];
  if (origin?.t !== 'str' || size?.t !== 'int' || size.v < 0 || root?.t !== 'bin' || root.v.length !== HASH_SIZE) {
    return fail(`the Log-Checkpoint field of ${path} is not origin="<origin>", size=<n>, root=:<base64>:`);
  }
  const checkpoint = log.checkpoint;
  if (origin.v !== checkpoint.origin) {
    const sentence = `${path} was computed against the log "${origin.v}", not "${checkpoint.origin}"`;
    // The demo log and the real one take each other's place in every cache in turn.
    if (origin.v === `${checkpoint.origin}/demo` || `${origin.v}/demo` === checkpoint.origin) throw new Stale(`${sentence} (even after waiting for caches)`);
    fail(sentence);
  }
  if (size.v > checkpoint.size) throw new Stale(`${path} was computed against a checkpoint of ${size.v} entries, past the ${checkpoint.size} of the checkpoint the site serves (even after waiting for caches)`);
  if (!treeHash(log.levels, 0, size.v).equals(root.v)) fail(`${path} was computed against a checkpoint of ${size.v} entries that is not a state of the log`);
  return size.v;
}

// --- when each night was logged -----------------------------------------------------------------

/** Finality (3 days) plus a day: a night is witnessed on time when the quorum cosigned its first entry by midnight UTC of its date plus this. */
const ON_TIME_DAYS = 4;

export interface Witnessed { date: string; at: number | undefined; deadline: number; status: 'on time' | 'late' | 'pending' }

/**
 * Each date's witnessing: the earliest time the quorum cosigned an archived checkpoint holding the
 * date's first entry, on time when no later than the deadline; late when later, or when nothing
 * cosigned it by a deadline already past; pending while the deadline is ahead.
 */
export function witnessing(entries: { date: string }[], archive: { size: number; quorumAt: number | undefined }[], now: number): Witnessed[] {
  const first = new Map<string, number>();
  entries.forEach((entry, index) => { if (!first.has(entry.date)) first.set(entry.date, index); });
  return [...first].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, index]) => {
    const times = archive.filter((c) => c.size > index && c.quorumAt !== undefined).map((c) => c.quorumAt!);
    const at = times.length ? Math.min(...times) : undefined;
    const deadline = midnight(date) + ON_TIME_DAYS * DAY_SECONDS;
    const status = at !== undefined ? (at <= deadline ? 'on time' : 'late') : now > deadline ? 'late' : 'pending';
    return { date, at, deadline, status };
  });
}

/** What --strict refuses: the first night logged late after the first night witnessed on time (imported history before it is welcome). */
export function lateAfterOnTime(nights: Witnessed[]): Witnessed | undefined {
  const first = nights.find((w) => w.status === 'on time');
  return first && nights.find((w) => w.status === 'late' && w.date > first.date);
}

interface ArchiveListing { vkey: unknown; sizes: number[] }

async function readListing(site: URL, prefix: string, demo: boolean): Promise<ArchiveListing> {
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

/** Every archived checkpoint up to the verified one, each a state of its tree, with when the quorum cosigned it. */
async function readArchive(site: URL, log: Log, sizes: number[], keys: NoteKey[], policy: Policy) {
  const wanted = [...new Set(sizes)].filter((size) => size <= log.checkpoint.size);
  let unsigned = 0;
  const archive = await eachLimited(wanted, async (size) => {
    const what = `archived checkpoint ${size}`;
    const answer = expectOk(await get(new URL(`${log.prefix}/checkpoint/${size}`, site), MAX_DOCUMENT_BYTES), what);
    const checkpoint = parseCheckpoint(utf8.decode(decoded(answer, what, MAX_DOCUMENT_BYTES)), what);
    if (checkpoint.origin !== log.checkpoint.origin || checkpoint.size !== size) fail(`${what} is checkpoint ${checkpoint.size} of "${checkpoint.origin}"`);
    // One signed by none of the keys this verifier trusts proves nothing, either way.
    if (!keys.some((k) => k.name === checkpoint.origin && signedBy(checkpoint, k, what))) { unsigned++; return { size, quorumAt: undefined }; }
    if (!treeHash(log.levels, 0, size).equals(checkpoint.root)) {
      fail(`${what} is signed by the log's key but is not a state of the log the checkpoint of ${log.checkpoint.size} entries names: the log signed two histories`);
    }
    return { size, quorumAt: quorumTime(policy, cosignatures(policy, checkpoint, what)) };
  });
  return { archive, unsigned };
}

/** The site's own account of when each night was witnessed must not claim more than the archive shows. */
function checkClaims(nights: Night[], witnessed: Witnessed[]): number {
  let behind = 0;
  // A night the log does not hold yet was witnessed by no one.
  for (const night of nights) {
    if (!witnessed.some((w) => w.date === night.date) && (night.witnessed_at !== null || night.witnessed_on_time === true)) {
      fail(`night ${night.date} in /api/history claims it was witnessed, but the log does not hold it`);
    }
  }
  for (const w of witnessed) {
    const night = nights.find((n) => n.date === w.date);
    if (!night) continue;
    const claimedAt = typeof night.witnessed_at === 'string' ? Date.parse(night.witnessed_at) / 1000 : night.witnessed_at === null ? undefined : NaN;
    const claimedOnTime = night.witnessed_on_time;
    const expected = w.status === 'on time' ? true : w.status === 'late' ? false : null;
    const shown = w.at === undefined ? 'no archived checkpoint holding its first entry is cosigned by the quorum' : `the quorum first cosigned it at ${isoSeconds(new Date(w.at * 1000))}`;
    if (Number.isNaN(claimedAt) || (claimedOnTime !== true && claimedOnTime !== false && claimedOnTime !== null)) fail(`night ${w.date} in /api/history has no witnessed_at (a time or null) and witnessed_on_time (true, false or null)`);
    if (claimedOnTime === true && expected !== true) fail(`night ${w.date} in /api/history claims it was witnessed on time, but ${shown}, after ${isoSeconds(new Date(w.deadline * 1000))}`);
    if (claimedAt !== undefined && (w.at === undefined || claimedAt < w.at)) fail(`night ${w.date} in /api/history claims the quorum cosigned it at ${night.witnessed_at}, but ${shown}`);
    // A null the archive has since overtaken is an answer computed before the cosignature came.
    if (claimedAt === undefined && (claimedOnTime === null || claimedOnTime === expected)) {
      if (w.at !== undefined || claimedOnTime !== expected) behind++;
      continue;
    }
    if (claimedAt !== w.at || claimedOnTime !== expected) fail(`night ${w.date} in /api/history says it was witnessed at ${String(night.witnessed_at)} (on time: ${String(claimedOnTime)}), but ${shown}`);
  }
  return behind;
}

// --- the state file ------------------------------------------------------------------------------

/** The log's key (vkey), the keys it replaced, and the newest checkpoint seen. */
interface State { vkey: string; previous_vkeys: string[]; origin: string; size: number; root: string; checkpoint: string; seen_at: string }

function readState(file: string): State | undefined {
  if (!existsSync(file)) return undefined;
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (error) { return fail(`the state file ${file} cannot be read (${(error as { code?: string }).code ?? (error as Error).message})`); }
  let state: unknown;
  try { state = JSON.parse(text); } catch { state = undefined; }
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
  if (!isRecord(state) || typeof state.origin !== 'string' || !Number.isSafeInteger(state.size) || (state.size as number) < 0
    || typeof state.root !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(state.root) || typeof state.seen_at !== 'string'
    || !(state.vkey === undefined || typeof state.vkey === 'string') || !(state.previous_vkeys === undefined || strings(state.previous_vkeys))) {
    return fail(`the state file ${file} is not one this verifier writes (vkey, previous_vkeys, origin, size, root, checkpoint, seen_at)`);
  }
  return {
    vkey: state.vkey ?? '', previous_vkeys: (state.previous_vkeys as string[] | undefined) ?? [], origin: state.origin, size: state.size as number,
    root: state.root, checkpoint: typeof state.checkpoint === 'string' ? state.checkpoint : '', seen_at: state.seen_at,
  };
}

function saveState(file: string, state: State): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    fail(`the state file ${file} could not be written (${(error as { code?: string }).code ?? (error as Error).message})`);
  }
}

/** Two signed checkpoints of one origin that no consistency proof joins, written for a witness operator; fails naming the file. */
function rewritten(saved: State, now: Checkpoint, proof: Buffer[], stateFile: string): never {
  const file = join(dirname(stateFile), `log-rewrite-evidence-${isoSeconds(new Date()).replace(/[-:]/g, '')}.json`);
  const [older, newer] = saved.size <= now.size ? [saved.size, now.size] : [now.size, saved.size];
  const evidence = {
    statement: `Two checkpoints of the log "${now.origin}", both signed by its key, that no consistency proof joins (RFC 9162 §2.1.4): the log was rewritten.`,
    saved: { seen_at: saved.seen_at, size: saved.size, root: saved.root, checkpoint: saved.checkpoint },
    served: { seen_at: isoSeconds(new Date()), size: now.size, root: now.root.toString('base64'), checkpoint: now.note },
    consistency_proof: { old_size: older, new_size: newer, hashes: proof.map((h) => h.toString('base64')), verifies: false },
  };
  let where = `the evidence, both signed checkpoints and the failed proof, is in ${file}`;
  try { writeFileSync(file, `${JSON.stringify(evidence, null, 2)}\n`, { flag: 'wx' }); } catch (error) {
    where = `the evidence could not be written to ${file}: ${(error as { code?: string }).code ?? (error as Error).message}`;
  }
  return fail(`the log was rewritten: checkpoint ${now.size} is not consistent with checkpoint ${saved.size} seen on ${saved.seen_at} (${where})`);
}

/** The served checkpoint against the saved one: it extends it, or is an older view (a prefix of it), or the log was rewritten. */
async function checkConsistent(saved: State, log: Log, site: URL, cache: Map<string, Buffer>, stateFile: string): Promise<string> {
  const now = log.checkpoint;
  if (saved.origin !== now.origin) {
    if (saved.origin === `${now.origin}/demo`) return `  the demo log seen on ${saved.seen_at} gave way to the real log`;
    return fail(`the log's origin changed from "${saved.origin}" to "${now.origin}" since the checkpoint seen on ${saved.seen_at}`);
  }
  const savedRoot = Buffer.from(saved.root, 'base64');
  if (now.size >= saved.size) {
    const proof = consistencyProof(log.levels, saved.size, now.size);
    if (verifyConsistency(saved.size, now.size, savedRoot, now.root, proof)) return `  the log extends checkpoint ${saved.size} seen on ${saved.seen_at}`;
    return rewritten(saved, now, proof, stateFile);
  }
  // Smaller: a consistency proof from the tiles of the saved tree, if the site still serves them.
  let proof: Buffer[] = [];
  try {
    proof = consistencyProof((await readTree(site, log.prefix, saved.size, cache)).levels, now.size, saved.size);
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
  }
  if (verifyConsistency(now.size, saved.size, now.root, savedRoot, proof)) {
    return fail(`checkpoint ${now.size} is older than checkpoint ${saved.size} seen on ${saved.seen_at}, though a prefix of it: an older view of the log (a lagging node, or a replayed answer)`);
  }
  return rewritten(saved, now, proof, stateFile);
}

// --- the run -------------------------------------------------------------------------------------

interface Options { site: URL; siteGiven: boolean; stateFile: string | undefined; policyFile: string | undefined; vkey: string | undefined; receiptFile: string | undefined; strict: boolean }
/** The log keys trusted, where they came from, and the keys they replaced (for archived checkpoints). */
interface Trust { keys: NoteKey[]; source: string; previous: NoteKey[] }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const demoKeys = (keys: NoteKey[]): NoteKey[] => keys.map((k) => renamed(k, `${k.name}/demo`));
const witnessList = (times: Map<string, number>) => [...times.keys()].join(', ');
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

async function getText(site: URL, path: string, what: string): Promise<string> {
  const found = await get(new URL(path, site), MAX_DOCUMENT_BYTES);
  if (found.status === 404 && path.startsWith('/log/demo/')) throw new Stale(`${what} of the demo log (${path}) is gone, the demo data with it (even after waiting for caches)`);
  const answer = expectOk(found, what);
  try { return utf8.decode(decoded(answer, what, MAX_DOCUMENT_BYTES)); } catch (error) { if (error instanceof Failure) throw error; return fail(`${what} is not UTF-8`); }
}

/** A saved /log/proof/<date> receipt, checked offline; with --site, also whether its night is still the latest for its date. */
async function checkReceipt(o: Options, file: string, trust: Trust, policy: Policy | undefined): Promise<string[]> {
  let text: string;
  try { text = utf8.decode(readFileSync(file)); } catch (error) { return fail(`the receipt ${file} cannot be read as UTF-8 text (${(error as { code?: string }).code ?? 'not UTF-8'})`); }
  const bad = (why: string): never => fail(`the receipt ${file} is not a tlog-proof (https://c2sp.org/tlog-proof): ${why}`);
  const blank = text.indexOf('\n\n');
  if (blank < 0) bad('it has no blank line before its checkpoint');
  const head = text.slice(0, blank).split('\n');
  if (head[0] !== 'c2sp.org/tlog-proof@v1') bad('its first line is not c2sp.org/tlog-proof@v1');
  const base64Of = (line: string) => { const bytes = Buffer.from(line, 'base64'); return bytes.length && bytes.toString('base64') === line ? bytes : undefined; };
  const extra = head[1]?.startsWith('extra ') ? base64Of(head[1].slice(6)) ?? bad('its extra line is not base64') : undefined;
  const at = extra ? 2 : 1;
  const index = Number((/^index (0|[1-9][0-9]*)$/.exec(head[at] ?? '') ?? bad('it has no index line'))[1]);
  const proof = head.slice(at + 1).map((line) => { const hash = base64Of(line); return hash?.length === HASH_SIZE ? hash : bad('a line of its inclusion proof is not a base64 SHA-256 hash'); });
  if (!extra) fail(`the receipt ${file} carries no entry (its "extra" line), so it proves no night`);
  const what = `the receipt's checkpoint`;
  const checkpoint = readCheckpoint(text.slice(blank + 2), what, [...trust.keys, ...demoKeys(trust.keys)]);
  const demo = !trust.keys.some((k) => k.name === checkpoint.origin);
  if (!verifyInclusion(index, checkpoint.size, leafHash(extra!), proof, checkpoint.root)) {
    fail(`the receipt ${file} does not prove its entry is in its checkpoint: the inclusion proof fails`);
  }
  const entry = parseEntry(extra!, index);
  const out = [
    `verified the receipt ${file}`,
    `  night ${entry.date} (${entry.usd} USD) is entry ${index} of the checkpoint of ${checkpoint.size} entries of ${checkpoint.origin}${demo ? ' (demo data)' : ''}, signed by the log key ${vkeyOf(checkpoint.key)} (from ${trust.source})`,
  ];
  if (policy && !demo && policy.quorum !== 'none') out.push(`  cosigned by ${witnessList(checkQuorum(policy, checkpoint, what))}: the quorum "${policy.quorum}" of the policy ${o.policyFile}`);
  else if (policy) out.push(demo ? '  the demo log is not witnessed' : `  the policy ${o.policyFile} asks for no cosignature (quorum none)`);
  if (!o.siteGiven) return out;
  // Whether it is still the latest entry for its date: read from the log itself, verified like any other run.
  const prefix = demo ? '/log/demo' : '/log';
  const current = readCheckpoint(await getText(o.site, `${prefix}/checkpoint`, 'the checkpoint'), 'the checkpoint', demo ? demoKeys(trust.keys) : trust.keys);
  if (current.origin !== checkpoint.origin) fail(`the site's checkpoint is for the log "${current.origin}", not the receipt's "${checkpoint.origin}"`);
  const log = await readLog(o.site, prefix, current, new Map());
  if (current.size < checkpoint.size) fail(`the site's checkpoint of ${current.size} entries is older than the receipt's of ${checkpoint.size}: an older view of the log (a lagging node, or a replayed answer)`);
  if (!treeHash(log.levels, 0, checkpoint.size).equals(checkpoint.root)) fail(`the log was rewritten: the site's checkpoint of ${current.size} entries does not hold the receipt's checkpoint of ${checkpoint.size}`);
  const latest = latestByDate(readEntries(log.entries)).get(entry.date)!;
  out.push(latest.index === index
    ? `  night ${entry.date}: entry ${index} is still the latest for its date in the checkpoint of ${current.size} entries at ${o.site.origin}`
    : `  night ${entry.date} was corrected since: entry ${latest.index} (${latest.usd} USD) is now the latest for its date in the checkpoint of ${current.size} entries at ${o.site.origin}`);
  return out;
}

async function checkSite(o: Options, pinned: Trust | undefined, policy: Policy | undefined, saved: State | undefined): Promise<string[]> {
  const site = o.site;
  const directory = await readDirectory(site);
  const cache = new Map<string, Buffer>();
  for (let attempt = 1; ; attempt++) {
    try {
      const historyAnswer = expectOk(await get(new URL('/api/history', site), MAX_ANSWER_BYTES), '/api/history');
      const history = parseJson(decoded(historyAnswer, '/api/history', MAX_ANSWER_BYTES), '/api/history');
      if (!isRecord(history)) return fail('/api/history is not the track record (not a JSON object)');
      const demo = history.data_source === 'demo';
      const prefix = demo ? '/log/demo' : '/log';
      const listing = await readListing(site, prefix, demo);
      const out: string[] = [];

      // The log's key: pinned, or else the site's, trusted on first use.
      let trust = pinned;
      if (!trust) {
        const named = typeof listing.vkey === 'string' ? parseVkey(listing.vkey, ED25519_NOTE) : 'there is none';
        if (typeof named === 'string') return fail(`the checkpoint archive names no log key to trust on first use (${named}); give one with --vkey`);
        const key = demo && named.name.endsWith('/demo') ? renamed(named, named.name.slice(0, -'/demo'.length)) : named;
        trust = { keys: [key], source: 'the site, trusted on first use', previous: [] };
        out.push(`  trusting the log key ${vkeyOf(key)} on first use: the site named it${o.stateFile ? `; recorded in ${o.stateFile}` : '; run with --state to keep it'}`);
      }
      const logKeys = demo ? demoKeys(trust.keys) : trust.keys;
      const checkpoint = readCheckpoint(await getText(site, `${prefix}/checkpoint`, 'the checkpoint'), 'the checkpoint', logKeys);
      // A rotation overlap: the key the site names now signs this checkpoint too, so it is trusted from here on.
      const siteKey = typeof listing.vkey === 'string' ? parseVkey(listing.vkey, ED25519_NOTE) : undefined;
      let moved: NoteKey | undefined;
      if (siteKey && typeof siteKey !== 'string' && siteKey.name === checkpoint.origin && !siteKey.raw.equals(checkpoint.key.raw) && signedBy(checkpoint, siteKey, 'the checkpoint')) {
        moved = demo ? renamed(siteKey, siteKey.name.slice(0, -'/demo'.length)) : siteKey;
        out.push(`  the log key moved from ${vkeyOf(checkpoint.key)} to ${vkeyOf(siteKey)}: checkpoint ${checkpoint.size} is signed by both`);
      }
      const witnessed = policy && !demo && policy.quorum !== 'none';
      const cosigned = witnessed ? checkQuorum(policy, checkpoint, 'the checkpoint') : undefined;

      const log = await readLog(site, prefix, checkpoint, cache);
      // That the log is consistent with what was seen before comes first: a rolled-back log explains
      // whatever else then fails to match.
      if (saved) out.push(await checkConsistent(saved, log, site, cache, o.stateFile!));
      const entries = readEntries(log.entries);

      const statsAnswer = expectOk(await get(new URL('/api/stats', site), MAX_ANSWER_BYTES), '/api/stats');
      const stats = parseJson(decoded(statsAnswer, '/api/stats', MAX_ANSWER_BYTES), '/api/stats');
      if (!isRecord(stats)) return fail('/api/stats is not the stats record (not a JSON object)');
      const historySize = answerCheckpoint('/api/history', historyAnswer, log);
      const statsSize = answerCheckpoint('/api/stats', statsAnswer, log);
      // The nights first: a changed night is named, whatever else its change breaks.
      const asComputed = entries.slice(0, historySize);
      const nights = checkNights(history, asComputed);
      const historySigned = verifyAnswer('/api/history', historyAnswer, directory);
      const statsSigned = verifyAnswer('/api/stats', statsAnswer, directory);
      if (statsSize !== historySize || stats.updated_at !== history.updated_at) {
        throw new Stale(`/api/stats and /api/history were computed from different states of the figures (log sizes ${statsSize} and ${historySize}, updated ${String(stats.updated_at)} and ${String(history.updated_at)}), even after waiting for caches`);
      }
      const statsLine = checkStats(stats, nights, asComputed);

      const latest = latestByDate(asComputed);
      const since = typeof history.since_date === 'string' && DATE.test(history.since_date) ? history.since_date : undefined;
      const missing = since ? gaps(since, latest) : [];
      const lastLogged = [...latest.keys()].at(-1);
      const at = (signed: Signed, size: number) => `key ${signed.kid}${signed.retired === undefined ? '' : `, retired ${isoSeconds(new Date(signed.retired * 1000))}`}, created ${isoSeconds(new Date(signed.created * 1000))}, against checkpoint ${size}${size === checkpoint.size ? '' : ` (an older state of the same tree)`}`;
      out.unshift(
        `verified ${site.origin}`,
        `  log ${checkpoint.origin}${demo ? ' (demo data)' : ''}: checkpoint of ${checkpoint.size} entries signed by the log key ${vkeyOf(checkpoint.key)} (from ${trust.source}), every tile and entry matches it (${log.tiles} tiles)`,
      );
      out.push(
        cosigned ? `  cosigned by ${witnessList(cosigned)}: the quorum "${policy!.quorum}" of the policy ${o.policyFile}`
          : demo ? '  the demo log is not witnessed'
          : policy ? `  the policy ${o.policyFile} asks for no cosignature (quorum none): the log is not witnessed`
          : '  no --policy: the log\'s witnesses and when each night was logged are not checked',
        `  /api/history: ${nights.length} nights checked, ${latest.size} of them in the log, each the latest entry for its date, and every night of the log among them`,
        !since || lastLogged === undefined ? '  the log holds no night yet'
          : missing.length ? `  no figure for ${plural(missing.length, 'night')} from ${since} to ${lastLogged}: ${ranges(missing)}`
          : `  a figure for every night from ${since} to ${lastLogged}`,
        statsLine,
        `  /api/history signature verifies (${at(historySigned, historySize)}), and its Content-Digest`,
        `  /api/stats signature verifies (${at(statsSigned, statsSize)}), and its Content-Digest`,
      );

      if (cosigned) {
        const keys = [...trust.keys, ...trust.previous, ...(moved ? [moved] : [])];
        const { archive, unsigned } = await readArchive(site, log, listing.sizes, keys, policy!);
        const each = witnessing(entries, archive, Date.now() / 1000);
        const behind = checkClaims(nights, each);
        const named = (status: Witnessed['status']) => each.filter((w) => w.status === status).map((w) => w.date);
        const [onTime, late, pending] = [named('on time'), named('late'), named('pending')];
        out.push(
          `  ${plural(archive.length, 'archived checkpoint')} read${unsigned ? `, ${unsigned} of them signed by no key this verifier trusts and not counted` : ''}: ${plural(onTime.length, 'night')} witnessed on time, ${late.length} logged late, ${pending.length} not yet witnessed with the deadline ahead`,
          ...(late.length ? [`  logged late: ${ranges(late)}`] : []),
          ...(behind ? [`  /api/history does not yet show the witnessing of ${plural(behind, 'night')} (an answer computed before the cosignatures came)`] : []),
        );
        const lateAfter = lateAfterOnTime(each);
        if (o.strict && lateAfter) {
          fail(`night ${lateAfter.date} was logged late (${lateAfter.at === undefined ? 'no quorum cosigned it' : `the quorum cosigned it at ${isoSeconds(new Date(lateAfter.at * 1000))}`}, after its deadline ${isoSeconds(new Date(lateAfter.deadline * 1000))}), though night ${onTime[0]} before it was witnessed on time (--strict)`);
        }
      }

      if (o.stateFile) {
        const key = moved ?? trust.keys.find((k) => k.raw.equals(checkpoint.key.raw)) ?? checkpoint.key;
        const retired = moved ? [...trust.previous, ...trust.keys].map(vkeyOf) : trust.previous.map(vkeyOf);
        // Only a checkpoint consistent with the saved one and at least as large gets here: an older view fails.
        saveState(o.stateFile, {
          vkey: vkeyOf(key), previous_vkeys: [...new Set(retired)].filter((v) => v !== vkeyOf(key)),
          origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root.toString('base64'), checkpoint: checkpoint.note, seen_at: isoSeconds(new Date()),
        });
        out.push(`  saved checkpoint ${checkpoint.size} to ${o.stateFile}`);
      }
      return out;
    } catch (error) {
      if (!(error instanceof Stale)) throw error;
      if (attempt === ATTEMPTS) return fail(error.message);
      await sleep(RETRY_MS);
    }
  }
}

async function main(o: Options): Promise<string[]> {
  let policy: Policy | undefined;
  if (o.policyFile) {
    let bytes: Buffer;
    try { bytes = readFileSync(o.policyFile); } catch (error) { return fail(`the policy ${o.policyFile} cannot be read (${(error as { code?: string }).code ?? (error as Error).message})`); }
    policy = parsePolicy(bytes, o.policyFile);
  }
  const saved = o.stateFile ? readState(o.stateFile) : undefined;
  const logKey = (vkey: string, where: string): NoteKey => {
    const key = parseVkey(vkey, ED25519_NOTE);
    return typeof key === 'string' ? fail(`${where} is not a log key (a note verifier key of type 0x01): ${key}`) : key;
  };
  const previous = (saved?.previous_vkeys ?? []).map((v) => logKey(v, `a previous log key in the state file ${o.stateFile}`));
  const pinned: Trust | undefined = o.vkey ? { keys: [logKey(o.vkey, '--vkey')], source: '--vkey', previous }
    : policy?.logs.length ? { keys: policy.logs, source: `the policy ${o.policyFile}`, previous }
    : saved?.vkey ? { keys: [logKey(saved.vkey, `the log key in the state file ${o.stateFile}`)], source: `the state file ${o.stateFile}`, previous }
    : undefined;
  if (o.receiptFile) {
    if (!pinned) usage('--receipt needs the log\'s key: --vkey, a --policy with a log line, or a --state file an earlier run wrote');
    return checkReceipt(o, o.receiptFile, pinned!, policy);
  }
  return checkSite(o, pinned, policy, saved);
}

function usage(message: string): never {
  console.error(`verify: ${message}\n${USAGE}`);
  process.exit(2);
}

/** Runs only as the program itself, not when imported. */
function invokedDirectly(): boolean {
  try { return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url)); } catch { return false; }
}

if (invokedDirectly()) {
  let options: { site?: string | undefined; state?: string | undefined; policy?: string | undefined; vkey?: string | undefined; receipt?: string | undefined; strict?: boolean | undefined; help?: boolean | undefined };
  try {
    options = parseArgs({
      options: {
        site: { type: 'string' }, state: { type: 'string' }, policy: { type: 'string' }, vkey: { type: 'string' }, receipt: { type: 'string' },
        strict: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    }).values;
  } catch (error) {
    usage((error as Error).message);
  }
  if (options.help) {
    console.log(USAGE);
    process.exit(0);
  }
  let site: URL;
  try { site = new URL(options.site ?? DEFAULT_SITE); } catch { usage(`--site must be the URL of the site (scheme and host), not "${options.site}"`); }
  if ((site.protocol !== 'http:' && site.protocol !== 'https:') || site.username || site.password || site.pathname !== '/' || site.search || site.hash) {
    usage(`--site must be an http or https URL of the site itself (scheme and host only), not "${options.site}"`);
  }
  for (const name of ['state', 'policy', 'vkey', 'receipt'] as const) if (options[name] === '') usage(`--${name} needs a value`);
  if (options.strict && !options.policy) usage('--strict needs --policy: without witnesses no night is witnessed on time or late');
  if (options.vkey && typeof parseVkey(options.vkey, ED25519_NOTE) === 'string') usage(`--vkey must be the log's note verifier key (<name>+<key ID>+<key>, type 0x01), not "${options.vkey}"`);
  let code = 0;
  try {
    const o: Options = {
      site, siteGiven: options.site !== undefined, stateFile: options.state, policyFile: options.policy, vkey: options.vkey,
      receiptFile: options.receipt, strict: options.strict === true,
    };
    console.log((await main(o)).join('\n'));
  } catch (error) {
    console.error(`verify: ${error instanceof Failure ? error.message : `an unexpected error: ${(error as Error).message}`}`);
    code = 1;
  }
  agents.http.destroy();
  agents.https.destroy();
  process.exit(code);
}
