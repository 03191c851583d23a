// Let's Encrypt's test ACME server offline: Debian's pebble, with pebble-challtestsrv as the DNS
// server it validates through (the test names resolve to 127.0.0.1, nothing else resolves), on free
// loopback ports. Pebble's own https listener gets a certificate from a throw-away CA made here, the
// bundle the ACME client is told to trust (ACME_CA_BUNDLE).
// https://github.com/letsencrypt/pebble#readme
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch as undiciFetch } from 'undici';
import { freePort } from '../../stack/processes.ts';

export interface Pebble {
  directoryUrl: string;
  /** The CA of pebble's own https (ACME_CA_BUNDLE). */
  caBundle: string;
  /** Pebble's root, which signs the certificates it issues (from its management API). */
  root(): Promise<string>;
  /** How many orders pebble has taken so far (its log's "Added order" lines). */
  orders(): number;
  output: string[];
  stop(): Promise<void>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA and a certificate it signs for 127.0.0.1 and localhost, for pebble's listeners. */
function listenerCertificate(dir: string): { ca: string; cert: string; key: string } {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=pebble listener test CA'], dir);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'listener.key', '-out', 'listener.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(['x509', '-req', '-in', 'listener.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'listener.pem', '-days', '2', '-extfile', 'san.ext'], dir);
  return { ca: path.join(dir, 'ca.pem'), cert: path.join(dir, 'listener.pem'), key: path.join(dir, 'listener.key') };
}

function run(name: string, command: string, args: string[], env: Record<string, string>, output: string[]): ChildProcess {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean).map((line) => `[${name}] ${line}`)));
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Starts challtestsrv resolving `hosts` to 127.0.0.1, and pebble validating HTTP-01 on `httpPort`
 * (the stack's HTTP_PORT) through it, issuing certificates valid for `validitySeconds` (Let's
 * Encrypt's 90 days unless given; pebble's own default is five years).
 */
export async function startPebble(hosts: string[], httpPort: number, validitySeconds = 90 * 24 * 3600): Promise<Pebble> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pebble-'));
  // The ACME client may run as nginx's user, which reads the bundle copied from here.
  chmodSync(dir, 0o755);
  const listener = listenerCertificate(dir);
  const [dnsPort, dnsManagement, acmePort, managementPort, tlsPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const output: string[] = [];
  const challtestsrv = run('challtestsrv', 'pebble-challtestsrv', [
    '-defaultIPv4', '', '-defaultIPv6', '', '-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${dnsManagement}`,
    '-http01', '', '-https01', '', '-tlsalpn01', '',
  ], {}, output);
  writeFileSync(path.join(dir, 'pebble-config.json'), JSON.stringify({
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: listener.cert,
      privateKey: listener.key,
      httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      certificateValidityPeriod: validitySeconds,
    },
  }));
  // No random sleep before validating, and every nonce honoured: the ACME flow as Let's Encrypt runs it,
  // without pebble's deliberate delays and nonce rejections. Validation itself is real.
  const pebble = run('pebble', 'pebble', ['-config', path.join(dir, 'pebble-config.json'), '-dnsserver', `127.0.0.1:${dnsPort}`],
    { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' }, output);
  const trusted = new Agent({ connect: { ca: readFileSync(listener.ca, 'utf8') } });
  const stop = async () => {
    await Promise.all([stopChild(pebble), stopChild(challtestsrv)]);
    await trusted.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ready = await Promise.all([
        undiciFetch(`https://127.0.0.1:${acmePort}/dir`, { dispatcher: trusted }).then((res) => res.ok, () => false),
        fetch(`http://127.0.0.1:${dnsManagement}/add-a`, { method: 'POST', body: JSON.stringify({ host: hosts[0], addresses: ['127.0.0.1'] }) }).then((res) => res.ok, () => false),
      ]);
      if (ready.every(Boolean)) break;
      if (Date.now() > deadline) throw new Error(`pebble did not start:\n${output.join('\n')}`);
      await sleep(200);
    }
    for (const host of hosts) {
      const res = await fetch(`http://127.0.0.1:${dnsManagement}/add-a`, { method: 'POST', body: JSON.stringify({ host, addresses: ['127.0.0.1'] }) });
      if (!res.ok) throw new Error(`challtestsrv refused the A record of ${host}: HTTP ${res.status}`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    directoryUrl: `https://127.0.0.1:${acmePort}/dir`,
    caBundle: listener.ca,
    async root() {
      const res = await undiciFetch(`https://127.0.0.1:${managementPort}/roots/0`, { dispatcher: trusted });
      if (!res.ok) throw new Error(`pebble's management API answered ${res.status} for its root`);
      return res.text();
    },
    orders: () => output.filter((line) => line.includes('Added order')).length,
    output,
    stop,
  };
}
