// The cuts a partition scenario makes beyond the trunk and Network.cut (tests/support/netns.ts), and
// the dial that shows a cut is in force:
//   cutBetween  packets from one set of hosts to another dropped, on every network they share (the LAN
//               and the WAN: the writers reach the witness over the WAN), both ways or one way only.
//               One way, a TCP connection fails either way (its answers are lost), but a host still
//               hears whatever the other side sends it. Network.healAll() heals it with the rest.
//   dial        how a TCP connection from inside one host's namespace ends: 'open', 'refused', 'reset',
//               'timeout', or another error's code.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Cut, Network } from './netns.ts';

const exec = promisify(execFile);

/** Every address a host has: its LAN address and its WAN address, those it has. */
export function addressesOf(net: Network, host: string): string[] {
  const spec = net.hosts.get(host);
  if (!spec) throw new Error(`no host "${host}" in this network`);
  return [...(spec.lan === undefined ? [] : [net.lanAddress(host)]), ...(spec.wan === undefined ? [] : [net.wanAddress(host)])];
}

/**
 * Drops, silently, every packet from the hosts of `from` to those of `to` (and, unless `oneWay`, from
 * `to` to `from`), on whichever addresses they have, by a rule in each receiving host's namespace.
 * Every other pair of hosts still reaches each other.
 */
export function cutBetween(net: Network, from: string[], to: string[], { oneWay = false } = {}): Promise<Cut> {
  const dropFrom = (senders: string[]) => `ip saddr { ${senders.flatMap((h) => addressesOf(net, h)).join(', ')} } drop`;
  const receivers = oneWay ? to : [...to, ...from.filter((h) => !to.includes(h))];
  return net.filter(receivers, (h) => [dropFrom(to.includes(h) ? from : to)],
    `drop ${oneWay ? 'from' : 'between'} {${from.join(', ')}} ${oneWay ? 'to' : 'and'} {${to.join(', ')}}`);
}

/** How a TCP connection from inside `from` to `address`:`port` ends within `timeoutMs`. */
export async function dial(net: Network, from: string, address: string, port: number, timeoutMs = 3000): Promise<string> {
  const script = `const s = require('node:net').connect({ host: ${JSON.stringify(address)}, port: ${Number(port)} });
    const end = (what) => { console.log(what); process.exit(0); };
    s.on('connect', () => end('open')); s.on('error', (e) => end(e.code === 'ECONNREFUSED' ? 'refused' : e.code === 'ECONNRESET' ? 'reset' : e.code));
    setTimeout(() => end('timeout'), ${Number(timeoutMs)});`;
  const [file, args] = net.command(from, process.execPath, ['-e', script]);
  return (await exec(file, args)).stdout.trim();
}
