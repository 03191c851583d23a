// Keys, signed notes and cosignatures made in the tests with Node's crypto, written from the texts of
// https://c2sp.org/signed-note and https://c2sp.org/tlog-cosignature rather than from the verifier,
// and the verifier run as its users run it: the one file the site serves, downloaded, run with node.
import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SITE_PATHS } from '../../contract/paths.ts';
import { verifierScript } from '../../site/render/verifier.ts';

export interface TestKey { name: string; id: Buffer; raw: Buffer; privateKey: KeyObject; vkey: string }

/** A new Ed25519 key named `name`, of signature type 0x01 (a log's) or 0x04 (a witness's cosignature/v1). */
export function makeKey(name: string, type: 0x01 | 0x04): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const id = createHash('sha256').update(`${name}\n`).update(Buffer.of(type)).update(raw).digest().subarray(0, 4);
  return { name, id, raw, privateKey, vkey: `${name}+${id.toString('hex')}+${Buffer.concat([Buffer.of(type), raw]).toString('base64')}` };
}

const signatureLine = (key: TestKey, signature: Buffer) => `\u2014 ${key.name} ${Buffer.concat([key.id, signature]).toString('base64')}\n`;

/** The checkpoint body signed by the log's key: the note, without any cosignature yet. */
export const signCheckpoint = (body: string, log: TestKey): string => `${body}\n${signatureLine(log, sign(null, Buffer.from(body), log.privateKey))}`;

/** A cosignature/v1 line: the key ID, then a big-endian u64 timestamp and the Ed25519 signature of the header, time line and body. */
export function cosignature(body: string, witness: TestKey, time: number): string {
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64BE(BigInt(time));
  return signatureLine(witness, Buffer.concat([timestamp, sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${body}`), witness.privateKey)]));
}

const run = promisify(execFile);

/** Where the served copies are kept while the tests run, one per site. */
const copiesDir = mkdtempSync(path.join(tmpdir(), 'verify-served-'));
process.on('exit', () => rmSync(copiesDir, { recursive: true, force: true }));
const copies = new Map<string, Promise<string>>();
/** A site for a run that checks none (a receipt offline): the build still names one. */
const NO_SITE = 'https://verifier.invalid';

/** The verifier the site serves, downloaded once; for a run offline, as the site's build makes it. */
function servedVerifier(site: string | undefined): Promise<string> {
  let copy = copies.get(site ?? NO_SITE);
  if (!copy) {
    copy = (async () => {
      let script: string;
      if (site) {
        const answer = await fetch(site + SITE_PATHS.LOG_VERIFIER);
        if (!answer.ok) throw new Error(`${site}${SITE_PATHS.LOG_VERIFIER} answered HTTP ${answer.status}`);
        script = await answer.text();
      } else {
        script = await verifierScript(NO_SITE);
      }
      const file = path.join(mkdtempSync(path.join(copiesDir, 'site-')), path.basename(SITE_PATHS.LOG_VERIFIER));
      writeFileSync(file, script);
      return file;
    })();
    copies.set(site ?? NO_SITE, copy);
  }
  return copy;
}

/** `node verify.mjs ...args` with the served verifier: its exit status, stdout and stderr. */
export async function verify(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const site = args.includes('--site') ? args[args.indexOf('--site') + 1] : undefined;
  return run(process.execPath, [await servedVerifier(site), ...args]).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}
