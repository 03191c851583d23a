// Checks the Public Stats Service from outside, as anyone can: `node verify.ts [--site URL] [--state FILE]`
// on Node 22.18 or later with nothing installed (this one file imports only Node's own modules; the
// site serves it at /log/verify.ts). It is written from the standards, not from the service's code:
//
// 1. the key directory lists Ed25519 JWKs named by their RFC 7638 thumbprints
//    (https://www.rfc-editor.org/rfc/rfc7638);
// 2. the log's checkpoint (https://c2sp.org/tlog-checkpoint) is a signed note
//    (https://c2sp.org/signed-note) by a key of that directory, named by the log's origin;
// 3. the entry bundles and hash tiles (https://c2sp.org/tlog-tiles) rebuild exactly the tree the
//    checkpoint names (RFC 6962 hashing, https://www.rfc-editor.org/rfc/rfc6962#section-2.1), and
//    every entry is RFC 8785 JSON (https://www.rfc-editor.org/rfc/rfc8785) of one night;
// 4. every night /api/history serves is the latest log entry for its date;
// 5. /api/history and /api/stats carry RFC 9421 signatures (https://www.rfc-editor.org/rfc/rfc9421)
//    that verify, over an RFC 9530 Content-Digest (https://www.rfc-editor.org/rfc/rfc9530) of the
//    bytes sent;
// 6. with --state, the log still extends the checkpoint an earlier run saved, and the newest one is
//    saved for the next run.
//
// Any failure ends with one sentence on stderr and exit status 1; bad usage exits 2.
import { createHash, createPublicKey, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

/** The site checked when --site is not given; the copy a site serves names that site here. */
const DEFAULT_SITE = 'http://127.0.0.1:8080';
const USAGE = `Usage: node verify.ts [--site URL] [--state FILE]
  --site URL    the site to check, scheme and host only (default ${DEFAULT_SITE})
  --state FILE  the last checkpoint seen: a later run checks the log still extends it, then saves the newest
  --help        print this help`;

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
const REQUIRED_COMPONENTS = ['"@status"', '"content-type"', '"content-digest"', '"@authority";req', '"@path";req'];
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

interface DirectoryKey { kid: string; raw: Buffer; key: KeyObject }

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
    keys.set(kid, { kid, raw: Buffer.from(x, 'base64url'), key });
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
const DICTIONARY_FIELDS = new Set(['content-digest', 'repr-digest', 'want-content-digest', 'want-repr-digest', 'signature', 'signature-input']);
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

interface Signed { kid: string; created: number }

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
  // RFC 9421 §2.5: one line per covered component, then the signature parameters, no final newline.
  const values = input.items.map((c) => componentValue(c, answer));
  if (values.some((v) => /[\r\n]/.test(v))) reject('a covered component has a line break in its value');
  const base = [...values.map((v, i) => `${identifiers[i]}: ${v}\n`), `"@signature-params": ${serializeMember(input)}`].join('');
  // Field values reach us as Latin-1 strings of their bytes: encode them back to those bytes.
  const ok = signature.value.v.length === 64 && verifyEd25519(null, Buffer.from(base, 'latin1'), key.key, signature.value.v);
  if (!ok) reject(`the Ed25519 signature by key ${key.kid} does not match what it covers`);
  return { kid: key.kid, created: created.v };
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

// --- the checkpoint: a signed note ---------------------------------------------------------------

interface Checkpoint { origin: string; size: number; root: Buffer; note: string }

/** signed-note: key ID = SHA-256(key name || 0x0A || 0x01 || 32-byte Ed25519 public key)[:4]. */
const noteKeyId = (name: string, raw: Buffer): Buffer => sha256(Buffer.from(`${name}\n`, 'utf8'), Buffer.of(0x01), raw).subarray(0, 4);

function readCheckpoint(bytes: Buffer, keys: Map<string, DirectoryKey>, site: URL): Checkpoint {
  const notNote = (): never => fail('the checkpoint is not a signed note (https://c2sp.org/signed-note)');
  let note: string;
  try { note = utf8.decode(bytes); } catch { return notNote(); }
  // Valid UTF-8 with no ASCII control character but newline; text, a blank line, then signature lines.
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) notNote();
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) notNote();
  const text = note.slice(0, split + 1);
  const signatureLines = note.slice(split + 2, -1).split('\n');
  if (signatureLines.length > 100) fail('the checkpoint carries more than 100 signatures');

  const lines = text.slice(0, -1).split('\n');
  const [origin, size, root] = lines;
  if (lines.length < 3 || lines.some((line) => line === '') || !/^(0|[1-9][0-9]*)$/.test(size ?? '') || !/^[A-Za-z0-9+/]{43}=$/.test(root ?? '')) {
    fail('the checkpoint is not a checkpoint (https://c2sp.org/tlog-checkpoint): it needs an origin, a tree size and a root hash');
  }
  const expected = [`${site.host}/log`, `${site.host}/log/demo`];
  if (!expected.includes(origin!)) fail(`the checkpoint's origin "${origin}" is not this site's log ("${expected[0]}", or "${expected[1]}" for demo data)`);
  if (Number(size) > MAX_LOG_SIZE) fail(`the checkpoint's tree size ${size} is more than the ${MAX_LOG_SIZE} entries this verifier reads`);

  // The log's key is the directory key whose name is the origin and whose key ID matches; signatures by
  // other keys are ignored, one by that key that does not verify rejects the note.
  let verified = 0;
  for (const line of signatureLines) {
    const match = /^\u2014 ([^ ]+) ([A-Za-z0-9+/]+={0,2})$/.exec(line) ?? notNote();
    const [name, b64] = [match[1]!, match[2]!];
    const signature = Buffer.from(b64, 'base64');
    if (/[\s+]/u.test(name) || signature.length < 5 || signature.toString('base64') !== b64) notNote();
    if (name !== origin) continue;
    for (const key of keys.values()) {
      if (!noteKeyId(name, key.raw).equals(signature.subarray(0, 4))) continue;
      if (signature.length !== 68 || !verifyEd25519(null, Buffer.from(text, 'utf8'), key.key, signature.subarray(4))) {
        fail("the checkpoint's signature does not verify against the key directory");
      }
      verified++;
    }
  }
  if (!verified) fail("the checkpoint's signature does not verify against the key directory");
  return { origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64'), note };
}

// --- the tree ------------------------------------------------------------------------------------

const leafHash = (entry: Uint8Array): Buffer => sha256(Buffer.of(0x00), entry);
const nodeHash = (left: Uint8Array, right: Uint8Array): Buffer => sha256(Buffer.of(0x01), left, right);

/** levels[k][j] = MTH of the complete subtree of leaves [j·2^k, (j+1)·2^k). */
function subtreeLevels(leaves: Buffer[]): Buffer[][] {
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

interface Tile { level: 'entries' | number; index: number; width: number }

/** tlog-tiles: N as 3-digit path elements, all but the last prefixed with x; .p/W for a partial tile. */
function tilePath(tile: Tile, width = tile.width): string {
  const groups: string[] = [];
  let n = tile.index;
  do { groups.unshift(String(n % 1000).padStart(3, '0')); n = Math.floor(n / 1000); } while (n > 0);
  return `/log/tile/${tile.level}/${groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/')}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
}

/** The tiles of a level holding `count` hashes (or entries): the full ones, then a partial one. */
function tilesOf(level: Tile['level'], count: number): Tile[] {
  const tiles: Tile[] = [];
  for (let index = 0; index * TILE_WIDTH < count; index++) tiles.push({ level, index, width: Math.min(TILE_WIDTH, count - index * TILE_WIDTH) });
  return tiles;
}

/** A tile's bytes. A partial tile may be gone once the full one exists (tlog-tiles), so that is the fallback. */
async function readTile(site: URL, tile: Tile, cache: Map<string, Buffer>): Promise<{ body: Buffer; width: number; path: string }> {
  const max = tile.level === 'entries' ? MAX_BUNDLE_BYTES : TILE_WIDTH * HASH_SIZE;
  const what = tile.level === 'entries' ? 'an entry bundle' : 'a hash tile';
  const fetchTile = async (width: number) => {
    const path = tilePath(tile, width);
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

interface Log { checkpoint: Checkpoint; entries: Buffer[]; levels: Buffer[][]; tiles: number }

async function readLog(site: URL, checkpoint: Checkpoint, cache: Map<string, Buffer>): Promise<Log> {
  const size = checkpoint.size;
  const bundles = await eachLimited(tilesOf('entries', size), async (tile) => {
    const { body, width, path } = await readTile(site, tile, cache);
    return bundleEntries(body, width, path).slice(0, tile.width);
  });
  const entries = bundles.flat();
  const levels = subtreeLevels(entries.map(leafHash));
  // RFC 6962 §2.1: the empty tree's hash is SHA-256 of nothing; Go's sumdb/tlog writes zeros instead, accepted for size 0.
  const empty = size === 0 && checkpoint.root.equals(Buffer.alloc(HASH_SIZE));
  if (!empty && !treeHash(levels, 0, size).equals(checkpoint.root)) fail(`the log's entries do not hash to the root of checkpoint ${size}`);
  // Every hash tile a client of the log would read must hold the hashes the entries make: level L
  // holds the MTH of each complete subtree of 256^L leaves.
  const hashTiles: Tile[] = [];
  for (let level = 0; TILE_WIDTH ** level <= size; level++) hashTiles.push(...tilesOf(level, Math.floor(size / TILE_WIDTH ** level)));
  await eachLimited(hashTiles, async (tile) => {
    const { body, width, path } = await readTile(site, tile, cache);
    const hashes = levels[TILE_HEIGHT * (tile.level as number)]!;
    const first = tile.index * TILE_WIDTH;
    const expected = Buffer.concat(hashes.slice(first, first + tile.width));
    if (body.length !== width * HASH_SIZE || !body.subarray(0, tile.width * HASH_SIZE).equals(expected)) {
      fail(`the hash tile ${path} does not match the log's entries`);
    }
  });
  return { checkpoint, entries, levels, tiles: bundles.length + hashTiles.length };
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
const numberOrNull = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isFinite(v));

function readEntries(raw: Buffer[]): Entry[] {
  const latest = new Map<string, number>();
  return raw.map((bytes, index) => {
    const parsed = parseJson(bytes, `log entry ${index}`);
    if (canonicalJson(parsed) !== bytes.toString('utf8')) fail(`log entry ${index} is not RFC 8785 canonical JSON`);
    if (!isRecord(parsed) || typeof parsed.date !== 'string' || !DATE.test(parsed.date) || typeof parsed.usd !== 'number'
      || !numberOrNull(parsed.trading_cost_usd) || !numberOrNull(parsed.at_stake_usd) || typeof parsed.updated_at !== 'string'
      || !(parsed.supersedes === null || (Number.isSafeInteger(parsed.supersedes) && (parsed.supersedes as number) >= 0))) {
      return fail(`log entry ${index} is not a night (date, usd, trading_cost_usd, at_stake_usd, supersedes, updated_at)`);
    }
    const entry: Entry = { index, date: parsed.date, usd: parsed.usd, trading_cost_usd: parsed.trading_cost_usd, at_stake_usd: parsed.at_stake_usd, supersedes: parsed.supersedes as number | null };
    // A correction names the entry it replaces: the previous one for its date.
    const previous = latest.get(entry.date) ?? null;
    if (entry.supersedes !== previous) {
      fail(`log entry ${index} for ${entry.date} supersedes ${entry.supersedes ?? 'nothing'}, but the previous entry for that date is ${previous ?? 'none'}`);
    }
    latest.set(entry.date, index);
    return entry;
  });
}

type NightsVerdict = { ok: true; nights: number; logged: number } | { ok: false; date: string; stale?: 'older' | 'newer' };

/**
 * Every night must carry the index of the latest entry for its date, with that entry's figures, or
 * null when its date has no entry. A night that matches an earlier state of the log (an answer
 * cached before an entry was appended) or names an entry past the checkpoint (a checkpoint read
 * before the append) is stale rather than wrong, and is read again.
 */
function checkNights(history: unknown, entries: Entry[]): NightsVerdict {
  if (!isRecord(history) || !Array.isArray(history.nights)) return fail('/api/history is not the track record (no "nights" list)');
  const byDate = new Map<string, Entry[]>();
  for (const entry of entries) byDate.set(entry.date, [...(byDate.get(entry.date) ?? []), entry]);
  let logged = 0;
  let stale: NightsVerdict | undefined;
  for (const night of history.nights) {
    if (!isRecord(night) || typeof night.date !== 'string') return fail('/api/history has a night without a date');
    const date = night.date;
    const index = night.log_index ?? null;
    const matches = (entry: Entry | undefined) => entry !== undefined && entry.date === date && entry.usd === night.usd
      && entry.trading_cost_usd === night.trading_cost_usd && entry.at_stake_usd === night.at_stake_usd;
    const forDate = byDate.get(date) ?? [];
    const latest = forDate.at(-1);
    if (index === null ? latest === undefined : latest !== undefined && index === latest.index && matches(latest)) {
      if (latest) logged++;
      continue;
    }
    const isIndex = typeof index === 'number' && Number.isSafeInteger(index) && index >= 0;
    if (isIndex && index >= entries.length) stale ??= { ok: false, date, stale: 'newer' };
    else if (index === null || (isIndex && forDate.some((e) => e.index === index) && matches(entries[index]))) stale ??= { ok: false, date, stale: 'older' };
    else return { ok: false, date };
  }
  return stale ?? { ok: true, nights: history.nights.length, logged };
}

// --- the state file ------------------------------------------------------------------------------

interface State { origin: string; size: number; root: string; checkpoint: string; seen_at: string }

function readState(file: string): State | undefined {
  if (!existsSync(file)) return undefined;
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (error) { return fail(`the state file ${file} cannot be read (${(error as { code?: string }).code ?? (error as Error).message})`); }
  let state: unknown;
  try { state = JSON.parse(text); } catch { state = undefined; }
  if (!isRecord(state) || typeof state.origin !== 'string' || !Number.isSafeInteger(state.size) || (state.size as number) < 0
    || typeof state.root !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(state.root) || typeof state.seen_at !== 'string') {
    return fail(`the state file ${file} is not one this verifier writes (origin, size, root, checkpoint, seen_at)`);
  }
  return { origin: state.origin, size: state.size as number, root: state.root, checkpoint: typeof state.checkpoint === 'string' ? state.checkpoint : '', seen_at: state.seen_at };
}

/** The new tree extends the old one iff its first old-size leaves hash to the old root (RFC 6962 §2.1.2). */
function checkExtends(old: State, log: Log): void {
  const now = log.checkpoint;
  if (old.origin !== now.origin) fail(`the log's origin changed from "${old.origin}" to "${now.origin}" since the checkpoint seen on ${old.seen_at}`);
  if (now.size < old.size || (old.size > 0 && !treeHash(log.levels, 0, old.size).equals(Buffer.from(old.root, 'base64')))) {
    fail(`the log was rewritten: checkpoint ${now.size} does not extend checkpoint ${old.size} seen on ${old.seen_at}`);
  }
}

const stateOf = (checkpoint: Checkpoint, seenAt: Date): State =>
  ({ origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root.toString('base64'), checkpoint: checkpoint.note, seen_at: isoSeconds(seenAt) });

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

// --- the run -------------------------------------------------------------------------------------

async function main(site: URL, stateFile: string | undefined): Promise<string[]> {
  const keys = await readDirectory(site);
  const saved = stateFile ? readState(stateFile) : undefined;
  const cache = new Map<string, Buffer>();
  let previous: State | undefined;
  let log: Log;
  let history: Answer;
  let verdict: NightsVerdict;
  for (let attempt = 1; ; attempt++) {
    const checkpointAnswer = expectOk(await get(new URL('/log/checkpoint', site), MAX_DOCUMENT_BYTES), 'the checkpoint');
    const checkpoint = readCheckpoint(decoded(checkpointAnswer, 'the checkpoint', MAX_DOCUMENT_BYTES), keys, site);
    const seenAt = new Date();
    log = await readLog(site, checkpoint, cache);
    // That the log still extends what was seen before comes first: a rolled-back log explains
    // whatever else then fails to match.
    if (saved) checkExtends(saved, log);
    if (previous) checkExtends(previous, log);
    previous = stateOf(checkpoint, seenAt);
    const entries = readEntries(log.entries);

    history = expectOk(await get(new URL('/api/history', site), MAX_ANSWER_BYTES), '/api/history');
    // The nights first: a changed night is named, whatever else its change breaks.
    verdict = checkNights(parseJson(decoded(history, '/api/history', MAX_ANSWER_BYTES), '/api/history'), entries);
    if (verdict.ok) break;
    if (!verdict.stale || attempt === ATTEMPTS) {
      const why = verdict.stale === 'older' ? ' (it is not the latest entry for its date, even after waiting for caches)'
        : verdict.stale === 'newer' ? ` (it names an entry past checkpoint ${checkpoint.size}, even after waiting for caches)` : '';
      return fail(`night ${verdict.date} in /api/history is not in the log${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
  const historySigned = verifyAnswer('/api/history', history, keys);
  const stats = expectOk(await get(new URL('/api/stats', site), MAX_ANSWER_BYTES), '/api/stats');
  const statsSigned = verifyAnswer('/api/stats', stats, keys);

  if (stateFile) saveState(stateFile, previous!);
  const { checkpoint } = log;
  const at = (signed: Signed) => `key ${signed.kid}, created ${isoSeconds(new Date(signed.created * 1000))}`;
  return [
    `verified ${site.origin}`,
    `  log ${checkpoint.origin}${checkpoint.origin.endsWith('/demo') ? ' (demo data)' : ''}: checkpoint of ${checkpoint.size} entries signed by the key directory, every tile and entry matches it (${log.tiles} tiles)`,
    `  /api/history: ${verdict.nights} nights checked, ${verdict.logged} of them in the log, each the latest entry for its date`,
    `  /api/history signature verifies (${at(historySigned)}), and its Content-Digest`,
    `  /api/stats signature verifies (${at(statsSigned)}), and its Content-Digest`,
    ...(saved ? [`  the log extends checkpoint ${saved.size} seen on ${saved.seen_at}`] : []),
    ...(stateFile ? [`  saved checkpoint ${checkpoint.size} to ${stateFile}`] : []),
  ];
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
  let options: { site?: string | undefined; state?: string | undefined; help?: boolean | undefined };
  try {
    options = parseArgs({ options: { site: { type: 'string' }, state: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: false }).values;
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
  if (options.state === '') usage('--state needs a file name');
  let code = 0;
  try {
    console.log((await main(site, options.state)).join('\n'));
  } catch (error) {
    console.error(`verify: ${error instanceof Failure ? error.message : `an unexpected error: ${(error as Error).message}`}`);
    code = 1;
  }
  agents.http.destroy();
  agents.https.destroy();
  process.exit(code);
}
