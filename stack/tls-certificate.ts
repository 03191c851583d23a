// What the stack needs to know of a certificate it serves: the names it carries, its validity and
// serial, and whether it is due for renewal.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface CertificateFacts {
  /** The DNS names of its subjectAltName, sorted. */
  names: string[];
  notBefore: Date;
  notAfter: Date;
  /** Hex, as X509Certificate gives it. */
  serial: string;
  /** SHA-256 of the leaf, to notice a replaced file. */
  fingerprint: string;
}

/** The leaf (the first certificate) of a PEM file, or undefined when the file is missing or holds none. */
export function readCertificate(file: string): CertificateFacts | undefined {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(readFileSync(file));
  } catch {
    return undefined;
  }
  const names = (leaf.subjectAltName ?? '').split(', ').filter((entry) => entry.startsWith('DNS:')).map((entry) => entry.slice(4).toLowerCase()).sort();
  return { names, notBefore: leaf.validFromDate, notAfter: leaf.validToDate, serial: leaf.serialNumber, fingerprint: leaf.fingerprint256 };
}

/**
 * When to renew: once a third of the lifetime is left, as Let's Encrypt advises
 * (https://letsencrypt.org/docs/faq/), which stays well before expiry as lifetimes fall from 90
 * toward 45 days (30 and 15 days left).
 */
export function renewalDue(cert: Pick<CertificateFacts, 'notBefore' | 'notAfter'>): Date {
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
  return new Date(cert.notAfter.getTime() - lifetime / 3);
}

/** Health calls HTTPS degraded when the served certificate expires within this. */
export const EXPIRY_WARNING_MS = 14 * 24 * 3600 * 1000;

/** Whether `cert` names exactly these hosts. */
export function namesExactly(cert: Pick<CertificateFacts, 'names'>, hosts: string[]): boolean {
  const wanted = [...new Set(hosts.map((host) => host.toLowerCase()))].sort();
  return cert.names.length === wanted.length && cert.names.every((name, i) => name === wanted[i]);
}
