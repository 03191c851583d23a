// `npm run tls -- renew [--force] | status`: the HTTPS certificate of the service, with the same
// configuration `npm start` reads (.env and the environment). `renew` renews when due (with
// `--force`, now) through the same ACME client and directories as the running stack, then has the
// running nginx load the new certificate gracefully; `status` says what is served and when it renews.
import { readCommandLine } from '../config/command-line.ts';
import { loadEnv } from '../config/checkout.ts';
import { configFromEnv } from '../config/config.ts';
import { assertServableOrigins } from '../config/origins.ts';
import { runningNginx } from './nginx.ts';
import { bringCertificateUpToDate, planAcme } from './tls-acme.ts';
import { currentStatus, serveTlsParts } from './tls-serving.ts';

const USAGE = `Usage: npm run tls -- renew [--force] | status
  renew           renew the certificate if it is due (a third of its lifetime left), or obtain one if there is none
  renew --force   renew it now, due or not
  status          the certificate for SITE_URL and API_URL: names, serial, expiry, when it renews
  --help          print this help and do nothing else
Reads .env and the environment as npm start does; HTTPS is on when SITE_URL and API_URL are both https://.`;

const args = readCommandLine(USAGE, { options: { force: { type: 'boolean' } }, allowPositionals: true });
const [command, ...extra] = args.positionals;
const force = args.values.force ?? false;
if (command !== 'renew' && command !== 'status' || extra.length || (command === 'status' && force)) {
  console.error(USAGE);
  process.exit(2);
}
try {
  const cfg = configFromEnv(loadEnv(), []);
  assertServableOrigins(cfg);
  if (!cfg.tls) throw new Error('HTTPS is off: SITE_URL and API_URL are not https:// URLs of DNS names, so there is no certificate to renew.');
  if (command === 'status') {
    const status = currentStatus(cfg);
    const plan = cfg.tls.ownCertificate ? undefined : planAcme(cfg);
    console.log(status.certificate
      ? `certificate for ${status.certificate.names.join(' and ')}, serial ${status.certificate.serial}, expires ${status.certificate.notAfter.toISOString()}${plan?.action === 'keep' ? `, renews after ${plan.renewAt.toISOString()}` : plan ? ', due for renewal now' : ' (your own: TLS_CERT_FILE)'}`
      : 'no certificate yet: the running stack is obtaining one');
  } else {
    if (cfg.tls.ownCertificate) throw new Error('TLS_CERT_FILE and TLS_KEY_FILE bring your own certificate: renew it where it comes from; the running stack loads a replaced file within the hour.');
    const certificate = await bringCertificateUpToDate(cfg, (line) => console.log(line), { force });
    const facts = `for ${certificate.names.join(' and ')}, serial ${certificate.serial}, expires ${certificate.notAfter.toISOString()}`;
    if (runningNginx(cfg) === undefined) {
      console.log(`the certificate ${facts} is ready; the service is not running, and \`npm start\` serves it.`);
    } else {
      await serveTlsParts(cfg, { certificate, error: undefined });
      console.log(`serving the certificate ${facts}`);
    }
  }
} catch (error) {
  console.error(`tls: ${(error as Error).message}`);
  process.exit(1);
}
