// HTTPS by itself, inside the running stack: serves the certificate it has, obtains one when none
// is usable, renews it well before expiry, and after each change rewrites nginx's TLS parts and
// reloads it gracefully. When the ACME server cannot be reached it says why, keeps trying after a
// pause that grows, and never stops the stack. Health reports the served certificate's expiry
// (`data.tls`, added by nginx to both hosts' health records).
import { connect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/config.ts';
import { writeTlsServing, type ServedCertificate } from './nginx-config.ts';
import { reloadNginx } from './nginx.ts';
import type { Log } from './processes.ts';
import { bringCertificateUpToDate, lineageFiles, planAcme } from './tls-acme.ts';
import { EXPIRY_WARNING_MS, readCertificate, renewalDue, type CertificateFacts } from './tls-certificate.ts';

/** What the stack serves over HTTPS now, and why it has no certificate yet. */
export interface TlsStatus {
  /** The served certificate; undefined while the first is being obtained. */
  certificate: CertificateFacts | undefined;
  /** Why the last attempt to obtain or renew failed; undefined after a success. */
  error: string | undefined;
}

/** The files nginx serves: one's own (TLS_CERT_FILE, TLS_KEY_FILE), else the ACME lineage's. */
function servedFiles(cfg: Config): ServedCertificate {
  return cfg.tls!.ownCertificate ?? lineageFiles(cfg);
}

/** The certificate usable now, if any: present, not expired, and (from ACME) naming both hosts. */
export function currentStatus(cfg: Config, now = new Date()): TlsStatus {
  if (cfg.tls!.ownCertificate) {
    const certificate = readCertificate(cfg.tls!.ownCertificate.certFile);
    if (!certificate) throw new Error(`TLS_CERT_FILE (${cfg.tls!.ownCertificate.certFile}) holds no PEM certificate that can be read.`);
    return { certificate, error: undefined };
  }
  const plan = planAcme(cfg, now);
  return { certificate: plan.action === 'order' ? undefined : plan.certificate, error: undefined };
}

const isoSeconds = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Whether health calls HTTPS degraded: no certificate yet, or one that expires within 14 days. */
export const tlsDegraded = (status: TlsStatus, now = new Date()): boolean =>
  !status.certificate || status.certificate.notAfter.getTime() - now.getTime() < EXPIRY_WARNING_MS;

/** Only characters that are plain in JSON and in an nginx quoted string (no quote, backslash or $). */
const plain = (text: string) => text.replace(/[^\x20-\x7e]|["'\\$]/g, ' ').slice(0, 300);

/**
 * nginx's additions to the health records of both hosts: `data.tls` after `"data":{` (in the
 * spacing of the SQL record and of the edge's), and `"ok"` turned to `"degraded"` when HTTPS is.
 * https://nginx.org/en/docs/http/ngx_http_sub_module.html
 */
export function healthFilter(status: TlsStatus, now = new Date()): string {
  const tls = `{"expires_at":${status.certificate ? `"${isoSeconds(status.certificate.notAfter)}"` : 'null'},"obtaining":${!status.certificate},"error":${status.error ? `"${plain(status.error)}"` : 'null'}}`;
  const lines = ['sub_filter_types application/json;', 'sub_filter_once on;'];
  for (const colon of [' : ', ': ', ':']) {
    lines.push(`sub_filter '"data"${colon}{' '"data"${colon}{"tls"${colon}${tls}, ';`);
    if (tlsDegraded(status, now)) lines.push(`sub_filter '"status"${colon}"ok"' '"status"${colon}"degraded"';`);
  }
  return `# Written by stack/tls-serving.ts for the certificate served now.\n${lines.join('\n')}\n`;
}

/** Writes nginx's TLS parts for `status` (before nginx first starts, or followed by a reload). */
export function writeTlsParts(cfg: Config, status: TlsStatus): void {
  writeTlsServing(cfg, status.certificate ? servedFiles(cfg) : undefined, healthFilter(status));
}

/** The fingerprint of the certificate nginx presents for `host` on this machine now, or undefined when nothing answers. */
function presented(cfg: Config, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: cfg.tls!.httpsPort, servername: host, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.setTimeout(2000, () => socket.destroy());
    socket.once('error', () => resolve(undefined));
    socket.once('close', () => resolve(undefined));
  });
}

/**
 * Writes nginx's TLS parts for `status`, reloads nginx, and waits until both hosts present the
 * certificate (a reload returns before the new workers listen).
 */
export async function serveTlsParts(cfg: Config, status: TlsStatus): Promise<void> {
  writeTlsParts(cfg, status);
  reloadNginx(cfg);
  if (!status.certificate) return;
  const fingerprint = status.certificate.fingerprint;
  for (const deadline = Date.now() + 15_000; ;) {
    const shown = await Promise.all([cfg.tls!.siteHost, cfg.tls!.apiHost].map((host) => presented(cfg, host)));
    if (shown.every((print) => print === fingerprint)) return;
    if (Date.now() > deadline) throw new Error(`nginx was reloaded but does not present the new certificate (serial ${status.certificate.serial}); its output is above`);
    await sleep(100);
  }
}

/** Pauses after the 1st, 2nd, … failure in a row: from 15 s, doubling, at most an hour. */
const retryDelayMs = (failures: number) => Math.min(15_000 * 2 ** (failures - 1), 3600_000);
/** Looked at again at least this often: a replaced own certificate, a clock that jumped. */
const RECHECK_MS = 3600_000;

/** When to look next: the renewal, the moment health turns degraded, or the hour, whichever comes first. */
function nextCheckMs(status: TlsStatus, now = new Date()): number {
  const moments = [now.getTime() + RECHECK_MS];
  if (status.certificate) {
    moments.push(renewalDue(status.certificate).getTime(), status.certificate.notAfter.getTime() - EXPIRY_WARNING_MS);
  }
  const next = Math.min(...moments.filter((moment) => moment > now.getTime()));
  return Math.max(next - now.getTime(), 1000);
}

export interface CertificateKeeper {
  readonly status: TlsStatus;
  /** Resolves once a certificate is served (at once when one was). */
  readonly served: Promise<CertificateFacts>;
  stop(): Promise<void>;
}

/**
 * Starts keeping the certificate up to date. `status` is what nginx was started with; the keeper
 * rewrites nginx's TLS parts and reloads it whenever what it serves or reports changes.
 */
export function keepCertificate(cfg: Config, initial: TlsStatus, log: Log): CertificateKeeper {
  let status = initial;
  let written = healthFilter(status);
  let servedFingerprint = status.certificate?.fingerprint;
  const stopped = new AbortController();
  let resolveServed: (cert: CertificateFacts) => void;
  const served = new Promise<CertificateFacts>((resolve) => { resolveServed = resolve; });
  if (status.certificate) resolveServed!(status.certificate);

  const apply = async (next: TlsStatus) => {
    status = next;
    const filter = healthFilter(next);
    if (next.certificate?.fingerprint === servedFingerprint && filter === written) return;
    await serveTlsParts(cfg, next);
    written = filter;
    if (next.certificate && next.certificate.fingerprint !== servedFingerprint) {
      servedFingerprint = next.certificate.fingerprint;
      log(`tls: serving the certificate for ${next.certificate.names.join(' and ')}, serial ${next.certificate.serial}, expires ${isoSeconds(next.certificate.notAfter)}`);
      resolveServed(next.certificate);
    }
  };

  const loop = async () => {
    let failures = 0;
    while (!stopped.signal.aborted) {
      let waitMs: number;
      try {
        const certificate = cfg.tls!.ownCertificate ? currentStatus(cfg).certificate! : await bringCertificateUpToDate(cfg, log, { signal: stopped.signal });
        failures = 0;
        await apply({ certificate, error: undefined });
        waitMs = nextCheckMs(status);
      } catch (error) {
        if (stopped.signal.aborted) return;
        failures += 1;
        waitMs = retryDelayMs(failures);
        const why = (error as Error).message;
        const own = cfg.tls!.ownCertificate;
        const what = own ? `could not load the certificate from TLS_CERT_FILE ${own.certFile}`
          : `${status.certificate ? 'could not renew the certificate' : 'could not obtain a certificate'} from ${cfg.tls!.acmeDirectoryUrl}`;
        log(`tls: ${what}: ${why}; trying again in ${Math.round(waitMs / 1000)} s.`);
        // The served certificate, if any, stays; health says why it could not be renewed.
        try {
          await apply({ certificate: status.certificate, error: why });
        } catch (applyError) {
          log(`tls: ${(applyError as Error).message}`);
        }
      }
      try {
        await sleep(waitMs, undefined, { signal: stopped.signal });
      } catch {
        return;
      }
    }
  };
  const running = loop();

  return {
    get status() { return status; },
    served,
    async stop() {
      stopped.abort();
      await running;
    },
  };
}
