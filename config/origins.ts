// The public origins (SITE_URL, API_URL): their form, whether they can be served as set, and the
// HTTPS settings when both are https://.
import { isIP } from 'node:net';
import path from 'node:path';
import { ROOT_DIR } from './checkout.ts';
import { port, STACK_DEFAULTS, type Env } from './settings.ts';

/**
 * HTTPS on the public origins: nginx answers both hosts on HTTPS_PORT with a certificate for both
 * names, and on HTTP_PORT only ACME's HTTP-01 challenges and a redirect to the https origin.
 */
export interface TlsConfig {
  /** The host names of SITE_URL and API_URL, which the certificate names. */
  siteHost: string;
  apiHost: string;
  /** Where nginx listens, on every address (they differ from the URLs' ports only behind port forwarding). */
  httpsPort: number;
  httpPort: number;
  /** The ACME server's directory, the account's contact, and a PEM bundle the ACME client trusts for that server's own TLS. */
  acmeDirectoryUrl: string;
  acmeEmail: string | undefined;
  acmeCaBundle: string | undefined;
  /** One's own certificate (full chain) and key instead of ACME; both or neither. */
  ownCertificate: { certFile: string; keyFile: string } | undefined;
}

export function origin(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL, got "${raw}".`);
  }
  if (url.pathname !== '/' || url.search || url.hash) {
    throw new Error(`${name} must be an origin without a path, got "${raw}".`);
  }
  return url.origin;
}

/** A name a public certificate can carry: not localhost (RFC 6761 keeps it local) and not an IP literal. */
function isDnsName(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return isIP(bare) === 0 && bare !== 'localhost' && !bare.endsWith('.localhost');
}

/**
 * Why the public origins cannot be served as they are set, if they cannot: https on one only, https
 * on a name no certificate can carry, or one name for both hosts (told apart by name over https).
 */
function httpsRefusal(siteUrl: string, apiUrl: string): string | undefined {
  const site = new URL(siteUrl);
  const api = new URL(apiUrl);
  const https = [site, api].filter((url) => url.protocol === 'https:').length;
  if (https === 0) return undefined;
  if (https === 1) {
    return `SITE_URL (${siteUrl}) and API_URL (${apiUrl}) must both be https:// (the service then obtains a certificate for both names) or both http://; only one is https.`;
  }
  for (const [name, url] of [['SITE_URL', site], ['API_URL', api]] as const) {
    if (!isDnsName(url.hostname)) {
      return `${name} is https:// but its host ${url.hostname} is ${url.hostname.includes('localhost') ? 'localhost' : 'an IP address'}: a certificate needs a DNS name that points at this machine, such as stats.example.org.`;
    }
  }
  if (site.hostname === api.hostname) {
    return `SITE_URL and API_URL both name ${site.hostname}: over https the two hosts are told apart by name, so give the API its own, such as api.${site.hostname}.`;
  }
  return undefined;
}

/**
 * Refuses, with a sentence, public origins the stack cannot serve (httpsRefusal): checked when the
 * stack starts, not by every tool that reads the configuration (the writer reads only SITE_URL).
 */
export function assertServableOrigins(cfg: { siteUrl: string; apiUrl: string }): void {
  const refusal = httpsRefusal(cfg.siteUrl, cfg.apiUrl);
  if (refusal) throw new Error(refusal);
}

/** TLS settings when both public origins are https:// URLs of distinct DNS names. */
export function tls(env: Env, siteUrl: string, apiUrl: string): TlsConfig | undefined {
  const site = new URL(siteUrl);
  const api = new URL(apiUrl);
  if (site.protocol !== 'https:' || api.protocol !== 'https:' || httpsRefusal(siteUrl, apiUrl)) return undefined;
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (Boolean(certFile) !== Boolean(keyFile)) throw new Error('TLS_CERT_FILE and TLS_KEY_FILE go together: set both (your own certificate and its key) or neither (a certificate from ACME).');
  const acmeDirectoryUrl = env.ACME_DIRECTORY_URL || STACK_DEFAULTS.ACME_DIRECTORY_URL;
  if (!/^https:\/\/[^/]/.test(acmeDirectoryUrl)) throw new Error(`ACME_DIRECTORY_URL must be the https:// URL of an ACME server's directory, got "${acmeDirectoryUrl}".`);
  return {
    siteHost: site.hostname,
    apiHost: api.hostname,
    httpsPort: port(env, 'HTTPS_PORT'),
    httpPort: port(env, 'HTTP_PORT'),
    acmeDirectoryUrl,
    acmeEmail: env.ACME_EMAIL || undefined,
    acmeCaBundle: env.ACME_CA_BUNDLE ? path.resolve(ROOT_DIR, env.ACME_CA_BUNDLE) : undefined,
    ownCertificate: certFile && keyFile ? { certFile: path.resolve(ROOT_DIR, certFile), keyFile: path.resolve(ROOT_DIR, keyFile) } : undefined,
  };
}
