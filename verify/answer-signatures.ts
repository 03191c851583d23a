// The answers' RFC 9421 signatures (https://www.rfc-editor.org/rfc/rfc9421) over an RFC 9530
// Content-Digest (https://www.rfc-editor.org/rfc/rfc9530), by a key of the site's key directory
// (RFC 7517 JWKs of RFC 8037 OKP keys, named by their RFC 7638 thumbprints).
import { createHash, createPublicKey, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { isoSeconds, isRecord, parseJson, sha256 } from '../log-reader/encoding.ts';
import { fail, Failure } from '../log-reader/failure.ts';
import { decoded, expectOk, fieldValue, get, MAX_DOCUMENT_BYTES, type Answer } from '../log-reader/http.ts';
import { param, parseDictionary, serializeBare, serializeDictionary, serializeItem, serializeMember, serializeParams, type InnerList, type Item, type Member } from './structured-fields.ts';

/** The answers' signature: found by its tag, and what it must cover (RFC 9421 §3.2.1 application requirements). */
const SIGNATURE_TAG = 'public-stats';
const REQUIRED_COMPONENTS = ['"@status"', '"content-type"', '"content-digest"', '"log-checkpoint"', '"@authority";req', '"@path";req'];

/** `retired`: when the key was retired (its JWK's "exp", unix seconds); it signs nothing created since. */
export interface DirectoryKey { kid: string; raw: Buffer; key: KeyObject; retired: number | undefined }

/** RFC 7638 §3.2: SHA-256 over the required members of an OKP key, in lexicographic order, no whitespace. */
const thumbprint = (crv: string, x: string): string => sha256(Buffer.from(JSON.stringify({ crv, kty: 'OKP', x }))).toString('base64url');

export async function readDirectory(site: URL): Promise<Map<string, DirectoryKey>> {
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

export interface Signed { kid: string; created: number; retired: number | undefined }

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

export function verifyAnswer(path: string, answer: Answer, keys: Map<string, DirectoryKey>): Signed {
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
