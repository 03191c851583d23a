// The certificate for both public hosts from an ACME server by HTTP-01, with Debian's certbot
// (`certonly --webroot` to order, `renew` to renew), kept under the data directory: its own config,
// work and logs directories, so it never touches /etc/letsencrypt or the system's renewal timer.
// https://eff-certbot.readthedocs.io/en/stable/using.html
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../config/config.ts';
import type { TlsConfig } from '../config/origins.ts';
import { tlsPaths, type ServedCertificate } from './nginx-config.ts';
import { chownTree, NGINX_USER } from './nginx.ts';
import { idsOf, type Log } from './processes.ts';
import { namesExactly, readCertificate, renewalDue, type CertificateFacts } from './tls-certificate.ts';

/** The names one certificate carries: the site's and the API's. */
export const certificateHosts = (tls: TlsConfig): string[] => [tls.siteHost, tls.apiHost];

/**
 * certbot's name for the certificate of these hosts from this ACME server: another host or another
 * server is another lineage, ordered afresh, so a restart with the same settings finds its own.
 */
export function lineageName(tls: TlsConfig): string {
  const key = createHash('sha256').update(JSON.stringify([...certificateHosts(tls)].sort().concat(tls.acmeDirectoryUrl))).digest('hex').slice(0, 12);
  return `public-stats-${key}`;
}

/** The files certbot keeps current for a lineage (symbolic links to the latest version). */
export function lineageFiles(cfg: Config): ServedCertificate {
  const live = path.join(tlsPaths(cfg.dataDir).certbotConfig, 'live', lineageName(cfg.tls!));
  return { certFile: path.join(live, 'fullchain.pem'), keyFile: path.join(live, 'privkey.pem') };
}

/** What to do now: keep serving the certificate, renew it, or order one. */
export type AcmePlan =
  | { action: 'keep'; certificate: CertificateFacts; renewAt: Date }
  | { action: 'renew'; certificate: CertificateFacts }
  | { action: 'order' };

/** Reads the lineage of these hosts and this server: no new order while one exists that is not due. */
export function planAcme(cfg: Config, now = new Date()): AcmePlan {
  const certificate = readCertificate(lineageFiles(cfg).certFile);
  if (!certificate || !namesExactly(certificate, certificateHosts(cfg.tls!)) || certificate.notAfter <= now) return { action: 'order' };
  const renewAt = renewalDue(certificate);
  return now < renewAt ? { action: 'keep', certificate, renewAt } : { action: 'renew', certificate };
}

/** As root, certbot runs as nginx's user, which must read the key it writes; otherwise as the current user. */
function certbotIds(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? idsOf(NGINX_USER) : {};
}

/**
 * The directories certbot and nginx share, owned by the user both run as; the nginx worker reads the
 * challenges, so every directory down to the webroot lets it through (mode 0755).
 */
function prepareDirectories(cfg: Config): string | undefined {
  const paths = tlsPaths(cfg.dataDir);
  const challenges = path.join(paths.webroot, '.well-known', 'acme-challenge');
  for (const dir of [paths.certbotConfig, paths.certbotWork, paths.certbotLogs, challenges]) mkdirSync(dir, { recursive: true });
  // Whatever the umask: nginx's workers read the challenges, through every directory down to them.
  for (let dir = challenges; dir !== path.dirname(paths.dir); dir = path.dirname(dir)) chmodSync(dir, 0o755);
  // A private CA's bundle, copied where certbot's user can read it.
  let bundle: string | undefined;
  if (cfg.tls!.acmeCaBundle) {
    if (!existsSync(cfg.tls!.acmeCaBundle)) throw new Error(`ACME_CA_BUNDLE names ${cfg.tls!.acmeCaBundle}, which does not exist.`);
    bundle = path.join(paths.dir, 'acme-ca-bundle.pem');
    copyFileSync(cfg.tls!.acmeCaBundle, bundle);
  }
  const ids = certbotIds();
  if (ids.uid !== undefined) chownTree(paths.dir, { uid: ids.uid, gid: ids.gid! });
  return bundle;
}

/** The last lines certbot printed that say what went wrong, without its advice on where to look. */
function certbotFailure(output: string): string {
  const lines = output.split('\n').map((line) => line.trim())
    .filter((line) => line && !/^(Ask for help|See the logfile|Saving debug log|-{3,}|Some challenges have failed)/.test(line));
  return lines.slice(-3).join(' ') || 'certbot failed without saying why';
}

async function certbot(cfg: Config, args: string[], signal?: AbortSignal): Promise<void> {
  const bundle = prepareDirectories(cfg);
  const paths = tlsPaths(cfg.dataDir);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: paths.certbotWork,
    // Python's requests, which certbot speaks ACME with, trusts this bundle for the ACME server's https.
    ...(bundle ? { REQUESTS_CA_BUNDLE: bundle } : {}),
  };
  const common = ['--non-interactive', '--config-dir', paths.certbotConfig, '--work-dir', paths.certbotWork, '--logs-dir', paths.certbotLogs];
  try {
    await promisify(execFile)('certbot', [...args, ...common], { env, ...certbotIds(), timeout: 10 * 60_000, signal });
  } catch (error) {
    const { stdout = '', stderr = '', code } = error as { stdout?: string; stderr?: string; code?: string | number };
    if (code === 'ENOENT') throw new Error('certbot is not installed: install it (Debian/Ubuntu: `apt-get install -y certbot`).');
    throw new Error(certbotFailure(`${stdout}\n${stderr}`));
  }
}

/** Orders a certificate for both hosts (a new lineage), answering the challenges from the webroot nginx serves. */
async function order(cfg: Config, signal?: AbortSignal): Promise<void> {
  const tls = cfg.tls!;
  await certbot(cfg, [
    'certonly', '--webroot', '--webroot-path', tlsPaths(cfg.dataDir).webroot,
    '--cert-name', lineageName(tls), ...certificateHosts(tls).flatMap((host) => ['-d', host]),
    '--server', tls.acmeDirectoryUrl, '--agree-tos',
    ...(tls.acmeEmail ? ['--email', tls.acmeEmail, '--no-eff-email'] : ['--register-unsafely-without-email']),
    // Ordered only when no usable certificate of these hosts and this server exists.
    '--force-renewal',
  ], signal);
}

/**
 * Renews the lineage now with its saved settings (server, account, webroot). No hook is passed: a
 * --deploy-hook given to `renew` replaces the one saved with the lineage; the caller reloads nginx
 * itself. Without --no-random-sleep-on-renew certbot would first sleep up to eight minutes.
 */
async function renew(cfg: Config, signal?: AbortSignal): Promise<void> {
  await certbot(cfg, ['renew', '--cert-name', lineageName(cfg.tls!), '--force-renewal', '--no-random-sleep-on-renew',
    '--webroot', '--webroot-path', tlsPaths(cfg.dataDir).webroot], signal);
}

/** Removes the lineages of other hosts or servers than these, once this one exists. */
async function pruneOtherLineages(cfg: Config, log: Log): Promise<void> {
  const live = path.join(tlsPaths(cfg.dataDir).certbotConfig, 'live');
  const keep = lineageName(cfg.tls!);
  for (const name of existsSync(live) ? readdirSync(live) : []) {
    if (!name.startsWith('public-stats-') || name === keep) continue;
    await certbot(cfg, ['delete', '--cert-name', name]).catch((error: Error) => log(`tls: could not remove the old certificate ${name}: ${error.message}`));
  }
}

/**
 * Brings the certificate up to date: orders one when none usable exists, renews it when due (or
 * when `force`), and otherwise does nothing: no request reaches the ACME server. Resolves with the
 * certificate now current; rejects with certbot's own words when the ACME server could not be
 * reached or refused.
 */
export async function bringCertificateUpToDate(cfg: Config, log: Log, { force = false, signal }: { force?: boolean; signal?: AbortSignal } = {}): Promise<CertificateFacts> {
  const plan = planAcme(cfg);
  if (plan.action === 'keep' && !force) return plan.certificate;
  if (plan.action === 'order') {
    log(`tls: ordering a certificate for ${certificateHosts(cfg.tls!).join(' and ')} from ${cfg.tls!.acmeDirectoryUrl} …`);
    await order(cfg, signal);
    await pruneOtherLineages(cfg, log);
  } else {
    log(`tls: renewing the certificate for ${certificateHosts(cfg.tls!).join(' and ')} (expires ${plan.certificate.notAfter.toISOString()}) …`);
    await renew(cfg, signal);
  }
  const certificate = readCertificate(lineageFiles(cfg).certFile);
  if (!certificate) throw new Error('certbot finished but left no certificate');
  return certificate;
}
