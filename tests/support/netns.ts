// Real network partitions on one machine (tests/stack/scale-out/partition*.test.ts): Linux network
// namespaces joined by veth pairs to bridges that live in a namespace of their own (the "switch"), so
// the machine's own namespace gets no interface, route, address, sysctl or firewall rule, and no
// packet of a test leaves the namespaces it made. Addresses come from 198.18.0.0/15, the range RFC
// 2544 sets aside for benchmark tests, and no namespace has a default route.
//
// The switch holds two bridges of one subnet (the "LAN", 198.18.0.0/24), `a` and `b`, joined by a
// trunk (a veth pair inside the switch): taking the trunk down cuts whatever hangs on `a` off from
// whatever hangs on `b`, as a failed switch uplink does. Every neighbour entry is made permanent, so
// that cut is silent: no ARP failure turns it into "no route to host". A host's LAN port can be moved
// from one bridge to the other, so any partition of the hosts into two sides is one trunk away.
// Finer cuts are nftables rules inside the hosts' own namespaces: `drop` (silent) or `reject` (a TCP
// reset, an ICMP port unreachable otherwise), between any two sets of hosts.
// A third bridge, `w` (the "WAN", 198.18.1.0/24), joins the hosts that need it (the writers and the
// witness, which talk over the internet rather than the database's network) and is never cut.
//
// Every namespace is named with the network's prefix. destroy() kills every process left in them and
// deletes them (their interfaces and nftables state go with them); reapNetworks(prefix) does the same
// for what an earlier run left behind; a reaper process does it when the test process dies without
// destroy(), killed outright included (both in netns-cleanup.ts).
// https://man7.org/linux/man-pages/man8/ip-netns.8.html, https://wiki.nftables.org/
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { lock, reapNetworks, startReaper } from './netns-cleanup.ts';

const exec = promisify(execFile);

export const LAN = '198.18.0';
export const WAN = '198.18.1';
const PREFIX_LENGTH = 24;

/** One host: a namespace with an address on the LAN (on bridge a or b), on the WAN, or both. */
export interface HostSpec {
  name: string;
  /** The last octet of its LAN address, 198.18.0.<lan>, when it has one, and the bridge its LAN port starts on. */
  lan?: number;
  bridge?: 'a' | 'b';
  /** The last octet of its WAN address, 198.18.1.<wan>, when it has one. */
  wan?: number;
}

export type CutHow = 'drop' | 'reject';

/** An nftables cut between two sets of hosts, or the trunk taken down between the two bridges. */
export interface Cut {
  readonly description: string;
  heal(): Promise<void>;
}

const NAME = /^[a-z0-9-]{1,12}$/;

async function ip(...args: string[]): Promise<string> {
  const { stdout } = await exec('ip', args);
  return stdout;
}

/** Runs `nft -f -` with `ruleset` inside namespace `ns`. */
function nft(ns: string, ruleset: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`nft in ${ns} failed (${code}): ${stderr.trim()}\n${ruleset}`))));
    child.stdin.end(ruleset);
  });
}

export class Network {
  readonly prefix: string;
  readonly hosts: Map<string, HostSpec>;
  readonly #bridgeOf = new Map<string, 'a' | 'b'>();
  readonly #cuts = new Set<Cut>();
  #serial = 0;
  #unlock: () => void;
  #reaper: { pid: number; dismiss(): void };
  #exitHook = () => this.#reapNow();

  private constructor(prefix: string, hosts: HostSpec[], unlock: () => void, reaper: { pid: number; dismiss(): void }) {
    this.prefix = prefix;
    this.hosts = new Map(hosts.map((h) => [h.name, h]));
    for (const h of hosts) if (h.lan !== undefined) this.#bridgeOf.set(h.name, h.bridge ?? 'a');
    this.#unlock = unlock;
    this.#reaper = reaper;
    process.once('exit', this.#exitHook);
  }

  /**
   * Makes the switch and one namespace per host, after removing what an earlier run with this prefix
   * left behind. `cleanup` lists paths (the test's data directory) the reaper removes should this
   * process die before destroy().
   */
  static async create(prefix: string, hosts: HostSpec[], { cleanup = [] as string[], lockTimeoutMs = 15 * 60_000 } = {}): Promise<Network> {
    if (!/^[a-z]{2,8}-$/.test(prefix)) throw new Error(`a network prefix is a few letters and a dash, got "${prefix}"`);
    for (const h of hosts) {
      if (!NAME.test(h.name) || h.name === 'sw') throw new Error(`host name "${h.name}": a-z, 0-9 and - only, at most 12, not "sw"`);
    }
    if (process.getuid?.() !== 0) throw new Error('network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)');
    const unlock = await lock(prefix, lockTimeoutMs);
    const left = reapNetworks(prefix);
    const network = new Network(prefix, hosts, unlock, startReaper(prefix, cleanup));
    if (left.length) console.warn(`removed namespaces an earlier run left behind: ${left.join(', ')}`);
    try {
      await network.#build();
    } catch (error) {
      await network.destroy();
      throw error;
    }
    return network;
  }

  /** The process that cleans up should this one die before destroy(). */
  get reaperPid(): number {
    return this.#reaper.pid;
  }

  /** The namespace of a host (or of the switch, "sw"). */
  ns(host: string): string {
    if (host !== 'sw' && !this.hosts.has(host)) throw new Error(`no host "${host}" in this network`);
    return `${this.prefix}${host}`;
  }

  lanAddress(host: string): string {
    const { lan } = this.#host(host);
    if (lan === undefined) throw new Error(`host ${host} is not on the LAN`);
    return `${LAN}.${lan}`;
  }

  wanAddress(host: string): string {
    const { wan } = this.#host(host);
    if (wan === undefined) throw new Error(`host ${host} is not on the WAN`);
    return `${WAN}.${wan}`;
  }

  /** The program and arguments that run `program args` inside the host's namespace (as `ids` when given: nsenter drops to them after entering). */
  command(host: string, program: string, args: string[], ids: { uid?: number; gid?: number } = {}): [string, string[]] {
    const user = ids.uid === undefined ? [] : ['--setuid', String(ids.uid), '--setgid', String(ids.gid)];
    return ['nsenter', [`--net=/run/netns/${this.ns(host)}`, ...user, '--', program, ...args]];
  }

  #host(name: string): HostSpec {
    const h = this.hosts.get(name);
    if (!h) throw new Error(`no host "${name}" in this network`);
    return h;
  }

  async #build(): Promise<void> {
    const sw = this.ns('sw');
    await ip('netns', 'add', sw);
    await ip('-n', sw, 'link', 'set', 'lo', 'up');
    for (const bridge of ['br-a', 'br-b', 'br-w']) {
      await ip('-n', sw, 'link', 'add', bridge, 'type', 'bridge');
      await ip('-n', sw, 'link', 'set', bridge, 'up');
    }
    await ip('-n', sw, 'link', 'add', 'trunk-a', 'type', 'veth', 'peer', 'name', 'trunk-b');
    await ip('-n', sw, 'link', 'set', 'trunk-a', 'master', 'br-a');
    await ip('-n', sw, 'link', 'set', 'trunk-b', 'master', 'br-b');
    await ip('-n', sw, 'link', 'set', 'trunk-a', 'up');
    await ip('-n', sw, 'link', 'set', 'trunk-b', 'up');
    const macs = new Map<string, { lan?: string; wan?: string }>();
    for (const h of this.hosts.values()) {
      const ns = this.ns(h.name);
      await ip('netns', 'add', ns);
      // No IPv6 at all (no link-local addresses, no neighbour discovery): the hosts speak only the test range.
      await exec('ip', ['netns', 'exec', ns, 'sysctl', '-q', '-w', 'net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1']);
      await ip('-n', ns, 'link', 'set', 'lo', 'up');
      const legs: ['lan' | 'wan', string, string][] = [];
      if (h.lan !== undefined) legs.push(['lan', `${LAN}.${h.lan}`, `br-${h.bridge ?? 'a'}`]);
      if (h.wan !== undefined) legs.push(['wan', `${WAN}.${h.wan}`, 'br-w']);
      const mac: { lan?: string; wan?: string } = {};
      for (const [leg, address, bridge] of legs) {
        const port = `${leg}-${h.name}`;
        await ip('link', 'add', leg, 'netns', ns, 'type', 'veth', 'peer', 'name', port, 'netns', sw);
        await ip('-n', ns, 'addr', 'add', `${address}/${PREFIX_LENGTH}`, 'dev', leg);
        await ip('-n', ns, 'link', 'set', leg, 'up');
        await ip('-n', sw, 'link', 'set', port, 'master', bridge);
        await ip('-n', sw, 'link', 'set', port, 'up');
        mac[leg] = (JSON.parse(await ip('-j', '-n', ns, 'link', 'show', leg)) as { address: string }[])[0]!.address;
      }
      macs.set(h.name, mac);
    }
    // Permanent neighbours: a cut never shows up as a failed ARP lookup, only as silence.
    for (const h of this.hosts.values()) {
      for (const other of this.hosts.values()) {
        if (other === h) continue;
        if (h.lan !== undefined && other.lan !== undefined) {
          await ip('-n', this.ns(h.name), 'neigh', 'replace', `${LAN}.${other.lan}`, 'lladdr', macs.get(other.name)!.lan!, 'dev', 'lan', 'nud', 'permanent');
        }
        if (h.wan !== undefined && other.wan !== undefined) {
          await ip('-n', this.ns(h.name), 'neigh', 'replace', `${WAN}.${other.wan}`, 'lladdr', macs.get(other.name)!.wan!, 'dev', 'wan', 'nud', 'permanent');
        }
      }
    }
  }

  /** Moves a host's LAN port to bridge `bridge` (no-op when it is there). With the trunk up, the host stays reachable. */
  async place(host: string, bridge: 'a' | 'b'): Promise<void> {
    if (this.#bridgeOf.get(host) === bridge) return;
    await ip('-n', this.ns('sw'), 'link', 'set', `lan-${host}`, 'master', `br-${bridge}`);
    this.#bridgeOf.set(host, bridge);
  }

  bridgeOf(host: string): 'a' | 'b' {
    return this.#bridgeOf.get(host)!;
  }

  /**
   * Cuts `side` off from every other host by taking the trunk down, after putting `side` on bridge a
   * and every other host on bridge b. Silent: packets across are dropped by the switch, nothing answers.
   */
  async cutLink(side: string[]): Promise<Cut> {
    for (const h of this.#bridgeOf.keys()) await this.place(h, side.includes(h) ? 'a' : 'b');
    const sw = this.ns('sw');
    await ip('-n', sw, 'link', 'set', 'trunk-a', 'down');
    const cut: Cut = {
      description: `link down between {${side.join(', ')}} and the rest`,
      heal: async () => {
        if (!this.#cuts.delete(cut)) return;
        await ip('-n', sw, 'link', 'set', 'trunk-a', 'up');
      },
    };
    this.#cuts.add(cut);
    return cut;
  }

  /**
   * Packets between the hosts of `from` and those of `to` dropped (silent) or rejected (a TCP reset,
   * an ICMP port unreachable for anything else) as they arrive, by nftables in the receiving host's
   * own namespace. Every other pair of hosts still reaches each other.
   */
  async cut(from: string[], to: string[], how: CutHow): Promise<Cut> {
    // A reset cut lets the other side's resets and ICMP errors through, or each side would eat the other's answer.
    const verdict = how === 'drop' ? ['drop'] : ['tcp flags & rst == rst accept', 'icmp type destination-unreachable accept', 'meta l4proto tcp reject with tcp reset', 'reject'];
    const senders = (h: string) => `{ ${(to.includes(h) ? from : to).map((x) => this.lanAddress(x)).join(', ')} }`;
    return this.filter([...to, ...from], (h) => verdict.map((v) => `ip saddr ${senders(h)} ${v}`), `${how} between {${from.join(', ')}} and {${to.join(', ')}}`);
  }

  /**
   * nftables rules of one's own on what arrives at each of `hosts` (an input chain, loopback
   * excepted), e.g. `ip saddr 198.18.1.21 drop` or `numgen random mod 100 < 30 drop`; `rules` gives
   * each host's. The nemesis's one-way drops, packet loss and bandwidth caps are such rules.
   */
  async filter(hosts: string[], rules: (host: string) => string[], description: string): Promise<Cut> {
    const table = `cut${++this.#serial}`;
    const touched: string[] = [];
    const cut: Cut = {
      description,
      heal: async () => {
        if (!this.#cuts.delete(cut)) return;
        for (const h of touched) await nft(this.ns(h), `delete table inet ${table}\n`);
      },
    };
    this.#cuts.add(cut);
    for (const h of hosts) {
      const lines = rules(h).map((r) => `    iifname != "lo" ${r}`).join('\n');
      await nft(this.ns(h), `table inet ${table} {\n  chain input {\n    type filter hook input priority 0; policy accept;\n${lines}\n  }\n}\n`);
      touched.push(h);
    }
    return cut;
  }

  /** Heals every cut still in place. */
  async healAll(): Promise<void> {
    for (const cut of [...this.#cuts]) await cut.heal();
  }

  /** The nftables ruleset of a host's namespace, as `nft list ruleset` prints it. */
  async ruleset(host: string): Promise<string> {
    return (await exec('ip', ['netns', 'exec', this.ns(host), 'nft', 'list', 'ruleset'])).stdout;
  }

  #reapNow(): void {
    reapNetworks(this.prefix);
  }

  /** Kills whatever still runs in the namespaces and deletes them. */
  async destroy(): Promise<void> {
    process.removeListener('exit', this.#exitHook);
    this.#cuts.clear();
    this.#reapNow();
    this.#reaper.dismiss();
    this.#unlock();
  }
}

/** Whether this machine can make the network: root, `ip` and `nft`, and network namespaces in the kernel. */
export function networkSupport(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  for (const tool of ['/usr/sbin/ip', '/usr/sbin/nft', '/usr/bin/nsenter']) if (!existsSync(tool)) return `${tool} is missing`;
  if (!existsSync('/proc/self/ns/net')) return 'no network namespaces in this kernel';
  return undefined;
}
