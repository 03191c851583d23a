// The partition tests' network (tests/support/netns.ts) does what they rely on: hosts in namespaces of
// their own reach each other over the test range and nothing else (no default route, the machine's own
// namespace untouched); taking the trunk down is silent (a connection attempt times out, nothing
// answers), an nftables drop is silent and a reject answers at once, each between the hosts named only,
// and healing restores them; and the namespaces go away with destroy(), when an earlier run left them
// (killed outright, with a process still inside), and when the process that made them is killed.
import { execFile, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../../config/checkout.ts';
import { procStat } from '../../../stack/processes.ts';
import { reapNetworks } from '../../support/netns-cleanup.ts';
import { Network, networkSupport } from '../../support/netns.ts';
import { dial as dialFrom } from '../../support/partition-cuts.ts';

const exec = promisify(execFile);
const PREFIX = 'pstn-';
const namespaces = (prefix: string) => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').map((l) => l.split(' ')[0]).filter((n) => n?.startsWith(prefix));
/** The machine's own interfaces, addresses, routes and firewall: what the tests must never change. */
const rootState = () => ['ip -o link show', 'ip -o addr show', 'ip route show table all', 'nft list ruleset'].map((c) => {
  try {
    return execFileSync('sh', ['-c', c], { encoding: 'utf8' }).replace(/ +(\d+) sec/g, '').replace(/valid_lft \S+ preferred_lft \S+/g, '');
  } catch {
    return '';
  }
}).join('\n');

let net: Network;
let rootBefore: string;

/** How a TCP connection from `from` to `address`:`port` ends within 3 s: 'open', 'refused', 'reset' or 'timeout'. */
const dial = (from: string, address: string, port: number) => dialFrom(net, from, address, port);

describe('the partition tests\' network', () => {
  beforeAll(async () => {
    const unsupported = networkSupport();
    if (unsupported) throw new Error(`network namespaces cannot be made here (${unsupported}): the tests need root and Debian's iproute2 and nftables (scripts/ensure-deps.sh --test installs them)`);
    rootBefore = rootState();
    net = await Network.create(PREFIX, [
      { name: 'a', lan: 1, bridge: 'a' }, { name: 'b', lan: 2, bridge: 'b' }, { name: 'c', lan: 3, bridge: 'b', wan: 3 }, { name: 'w', wan: 9 },
    ]);
  }, 60_000);

  afterAll(async () => {
    await net?.destroy();
  });

  it('joins the hosts over the test range only, with no default route, and leaves the machine\'s own network alone', async () => {
    expect(namespaces(PREFIX).sort()).toEqual(['pstn-a', 'pstn-b', 'pstn-c', 'pstn-sw', 'pstn-w']);
    for (const host of ['a', 'b', 'c', 'w', 'sw']) {
      const ns = `${PREFIX}${host}`;
      expect((await exec('ip', ['-n', ns, 'route', 'show', 'default'])).stdout.trim(), `${ns} has no default route`).toBe('');
      const addresses = (await exec('ip', ['-n', ns, '-o', '-4', 'addr', 'show'])).stdout.match(/inet \S+/g) ?? [];
      for (const a of addresses) expect(a, `${ns}: ${a}`).toMatch(/^inet (127\.0\.0\.1\/8|198\.18\.[01]\.\d+\/24)$/);
    }
    // Every host reaches the others on its networks: nothing listens on port 9, so the answer is a refusal.
    expect(await dial('a', net.lanAddress('b'), 9)).toBe('refused');
    expect(await dial('b', net.lanAddress('c'), 9)).toBe('refused');
    expect(await dial('c', net.wanAddress('w'), 9)).toBe('refused');
    // An address outside the test range has no route at all.
    expect(await dial('a', '192.0.2.1', 9)).toBe('ENETUNREACH');
    expect(rootState()).toBe(rootBefore);
  });

  it('cuts silently by taking the trunk down, and heals', async () => {
    const cut = await net.cutLink(['a', 'b']);
    expect(net.bridgeOf('b')).toBe('a');
    expect(await dial('a', net.lanAddress('c'), 9)).toBe('timeout');
    expect(await dial('c', net.lanAddress('b'), 9)).toBe('timeout');
    expect(await dial('a', net.lanAddress('b'), 9)).toBe('refused');
    // The WAN is not cut.
    expect(await dial('c', net.wanAddress('w'), 9)).toBe('refused');
    await cut.heal();
    expect(await dial('a', net.lanAddress('c'), 9)).toBe('refused');
  });

  it('drops silently or rejects at once between the hosts named only, with nftables in their own namespaces, and heals', async () => {
    const drop = await net.cut(['a'], ['b'], 'drop');
    expect(await dial('a', net.lanAddress('b'), 9)).toBe('timeout');
    expect(await dial('b', net.lanAddress('a'), 9)).toBe('timeout');
    expect(await dial('a', net.lanAddress('c'), 9)).toBe('refused');
    expect(await net.ruleset('b')).toContain(`ip saddr ${net.lanAddress('a')} drop`);
    await drop.heal();
    expect(await net.ruleset('b')).toBe('');
    const reject = await net.cut(['a'], ['b', 'c'], 'reject');
    const started = Date.now();
    expect(await dial('a', net.lanAddress('b'), 9)).toBe('refused');
    expect(await dial('c', net.lanAddress('a'), 9)).toBe('refused');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await net.ruleset('c')).toContain('reject with tcp reset');
    await reject.heal();
    for (const host of ['a', 'b', 'c']) expect(await net.ruleset(host)).toBe('');
    expect(rootState()).toBe(rootBefore);
  });

  it('removes what a killed run left behind, a process inside included, and what a killed process made', async () => {
    // A run that made its network and started a process in it, then was killed outright.
    const prefix = 'pstk-';
    const script = `import { Network } from ${JSON.stringify(path.join(ROOT_DIR, 'tests', 'support', 'netns.ts'))};
      import { spawn } from 'node:child_process';
      const net = await Network.create('${prefix}', [{ name: 'x', lan: 1, bridge: 'a' }]);
      const [file, args] = net.command('x', 'sleep', ['600']);
      spawn(file, args, { detached: true, stdio: 'ignore' }).unref();
      console.log('made', net.reaperPid);
      setInterval(() => {}, 1000);`;
    const run = async () => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const reaper = await new Promise<number>((resolve, reject) => {
        child.stdout.on('data', (c: Buffer) => { const made = /made (\d+)/.exec(c.toString()); if (made) resolve(Number(made[1])); });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      return { child, reaper };
    };
    const { child } = await run();
    expect(namespaces(prefix).sort()).toEqual(['pstk-sw', 'pstk-x']);
    const sleeper = execFileSync('ip', ['netns', 'pids', 'pstk-x'], { encoding: 'utf8' }).trim();
    expect(sleeper).not.toBe('');
    child.kill('SIGKILL');
    // Its reaper removes them once it is gone, the process inside killed first.
    for (let waited = 0; waited < 10_000 && namespaces(prefix).length; waited += 200) await sleep(200);
    expect(namespaces(prefix)).toEqual([]);
    // Killed (a zombie at most, waiting for the machine's init to reap it).
    expect(procStat(Number(sleeper))?.state ?? 'gone').toMatch(/^(Z|gone)$/);
    // And when its reaper is killed too, the next run removes the leftovers before it makes its own.
    const again = await run();
    process.kill(again.reaper, 'SIGKILL');
    again.child.kill('SIGKILL');
    await sleep(1500);
    expect(namespaces(prefix).sort()).toEqual(['pstk-sw', 'pstk-x']);
    const next = await Network.create(prefix, [{ name: 'y', lan: 1, bridge: 'a' }]);
    expect(namespaces(prefix).sort()).toEqual(['pstk-sw', 'pstk-y']);
    await next.destroy();
    expect(namespaces(prefix)).toEqual([]);
    expect(reapNetworks(prefix)).toEqual([]);
  }, 60_000);
});
