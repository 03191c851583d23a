// Renewal by itself: with certificates that live a minute, the running stack renews once a third of
// the lifetime is left, without being asked, and serves the new certificate on both hosts.
import tls from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../stack/processes.ts';
import { startPebble, type Pebble } from '../support/acme.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const SITE_HOST = 'stats.example.test';
const API_HOST = 'api.stats.example.test';
const LIFETIME_SECONDS = 60;

let pebble: Pebble | undefined;
let stack: TestStack | undefined;
afterAll(async () => {
  await stack?.destroy();
  await pebble?.stop();
});

function servedSerial(port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: host, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.once('error', reject);
  });
}

describe('renewal inside the running stack', () => {
  it('renews a certificate once a third of its lifetime is left, by itself, and serves the new one', async () => {
    const [httpsPort, httpPort] = [await freePort(), await freePort()];
    pebble = await startPebble([SITE_HOST, API_HOST], httpPort, LIFETIME_SECONDS);
    stack = await startTestStack({
      env: {
        SITE_URL: `https://${SITE_HOST}:${httpsPort}`, API_URL: `https://${API_HOST}:${httpsPort}`, HTTPS_PORT: String(httpsPort), HTTP_PORT: String(httpPort),
        ACME_DIRECTORY_URL: pebble.directoryUrl, ACME_CA_BUNDLE: pebble.caBundle,
      },
    });
    const first = await stack.tls!.served;
    expect(pebble.orders()).toBe(1);
    // The keeper's own log line for the next certificate it serves: the renewal, unasked.
    const renewedLine = await new Promise<string>((resolve, reject) => {
      const deadline = Date.now() + LIFETIME_SECONDS * 1000;
      const timer = setInterval(() => {
        const line = stack!.logs.find((l) => l.startsWith('tls: serving the certificate') && !l.includes(first.serial));
        if (line) resolve(line);
        else if (Date.now() < deadline) return;
        else reject(new Error(`no renewal before the first certificate expired:\n${stack!.logs.join('\n')}`));
        clearInterval(timer);
      }, 250);
    });
    expect(stack.logs.some((l) => l.startsWith('tls: renewing the certificate'))).toBe(true);
    const renewedSerial = renewedLine.match(/serial (\S+),/)![1]!;
    for (const host of [SITE_HOST, API_HOST]) expect(await servedSerial(httpsPort, host)).toBe(renewedSerial);
    expect(pebble.orders()).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
