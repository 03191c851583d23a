// The test chain of tests/support/chain.ts: its committed contracts are what their sources compile to,
// and on anvil they make the reward transfers an audit reads (batched payments at a chosen time, a
// reverted one, a plain transfer) and an EIP-1271 wallet that accepts its owner's signatures only.
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { type Abi, type Address, erc20Abi, getAddress, parseEventLogs } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainFixtures, compileFixtures, FIXTURES_FILE, renderFixtures } from '../fixtures/chain/compile.ts';
import {
  distributorAbi,
  startChain,
  testUsdAbi,
  type TestChain,
  unixSeconds,
  wallet1271Abi,
} from '../support/chain.ts';

/** One line per ABI item: kind, name, parameter types and names (and indexed), mutability, outputs. */
function abiLines(abi: readonly unknown[]): string[] {
  type Param = { type: string; name?: string; indexed?: boolean };
  type Item = { type: string; name?: string; inputs?: Param[]; outputs?: Param[]; stateMutability?: string };
  const params = (ps: Param[] | undefined) =>
    (ps ?? []).map((p) => `${p.type}${p.indexed ? ' indexed' : ''}${p.name ? ` ${p.name}` : ''}`).join(', ');
  return (abi as Item[])
    .map((i) => `${i.type} ${i.name ?? ''}(${params(i.inputs)}) ${i.stateMutability ?? ''} -> (${params(i.outputs)})`)
    .sort();
}

describe('the chain fixtures', () => {
  let fresh: ChainFixtures;
  beforeAll(() => {
    fresh = compileFixtures();
  });

  it('contracts.json is exactly what its sources compile to', () => {
    const committed = readFileSync(FIXTURES_FILE, 'utf8');
    expect(JSON.parse(committed)).toEqual(fresh);
    expect(committed).toBe(renderFixtures(fresh));
  });

  it("the helpers' typed ABIs are the compiled ones", () => {
    expect(abiLines(testUsdAbi)).toEqual(abiLines(fresh.contracts.TestUSD.abi));
    expect(abiLines(distributorAbi)).toEqual(abiLines(fresh.contracts.Distributor.abi));
    expect(abiLines(wallet1271Abi)).toEqual(abiLines(fresh.contracts.Wallet1271.abi));
    // The token's Transfer event is the standard one that erc20Abi decodes.
    const transfer = (abi: Abi) => abiLines(abi.filter((i) => i.type === 'event' && i.name === 'Transfer'));
    expect(transfer(testUsdAbi)).toEqual(transfer(erc20Abi));
  });
});

describe('a test chain', () => {
  let chain: TestChain;
  let token: Address;
  let distributor: Address;

  beforeAll(async () => {
    chain = await startChain({ start: '2026-03-01T00:00:00Z' });
    token = await chain.deployToken();
    distributor = await chain.deployDistributor();
    await chain.mint(token, distributor, 1_000_000_000n); // 1000 dollars
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it('is chain 137 with anvil dev accounts, and a 6-decimal token', async () => {
    expect(await chain.clients.getChainId()).toBe(137);
    expect(chain.accounts[0]?.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(await chain.clients.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' })).toBe(6);
  });

  it('pays two recipients in one transaction at midnight and 5 s', async () => {
    const [a, b] = [chain.accounts[1]!.address, chain.accounts[2]!.address];
    const paid = await chain.payAt('2026-03-02T00:00:05Z', token, distributor, [
      { to: a, amount: 12_340_000n },
      { to: b, amount: 5n },
    ]);
    const receipt = await chain.clients.getTransactionReceipt({ hash: paid.hash });
    expect(receipt.status).toBe('success');
    expect(receipt.blockNumber).toBe(paid.blockNumber);
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
    expect(transfers.map((t) => ({ token: getAddress(t.address), ...t.args }))).toEqual([
      { token, from: distributor, to: a, value: 12_340_000n },
      { token, from: distributor, to: b, value: 5n },
    ]);
    const block = await chain.clients.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.timestamp).toBe(unixSeconds('2026-03-02T00:00:05Z'));
    expect(paid.timestamp).toBe(block.timestamp);
    expect(new Date(Number(block.timestamp) * 1000).toISOString()).toBe('2026-03-02T00:00:05.000Z');
  });

  it('mines a failed payment with status reverted and no transfer', async () => {
    const held = await chain.clients.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [distributor] });
    const failed = await chain.failedPayAt('2026-03-03T00:00:05Z', token, distributor, [
      { to: chain.accounts[1]!.address, amount: held + 1n },
    ]);
    const receipt = await chain.clients.getTransactionReceipt({ hash: failed.hash });
    expect(receipt.status).toBe('reverted');
    expect(receipt.logs).toEqual([]);
    expect(failed.timestamp).toBe(unixSeconds('2026-03-03T00:00:05Z'));
    expect(await chain.clients.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [distributor] })).toBe(held);
    // One the distributor could pay is refused before it is sent.
    await expect(
      chain.failedPayAt('2026-03-03T00:00:06Z', token, distributor, [{ to: chain.accounts[1]!.address, amount: 1n }]),
    ).rejects.toThrow(/holds/);
  });

  it('makes a plain transfer from an account', async () => {
    const [from, to] = [chain.accounts[3]!, chain.accounts[4]!.address];
    await chain.mint(token, from.address, 7_000_000n);
    const sent = await chain.transferAt('2026-03-04T00:00:05Z', token, from, to, 7_000_000n);
    const receipt = await chain.clients.getTransactionReceipt({ hash: sent.hash });
    const [transfer, ...rest] = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
    expect(rest).toEqual([]);
    expect(transfer?.args).toEqual({ from: from.address, to, value: 7_000_000n });
    expect(sent.timestamp).toBe(unixSeconds('2026-03-04T00:00:05Z'));
    // The chain's time goes forward only.
    await expect(chain.transferAt('2026-03-04T00:00:04Z', token, from, to, 1n)).rejects.toThrow(/before the latest block/);
  });

  it("has a 1271 wallet that accepts its owner's signature and refuses another key's", async () => {
    const [owner, other] = [chain.accounts[5]!, chain.accounts[6]!];
    const wallet = await chain.deployWallet1271(owner.address);
    const message = 'public-stats wallet proof';
    const good = await owner.signMessage({ message });
    const bad = await other.signMessage({ message });
    expect(await chain.clients.verifyMessage({ address: wallet, message, signature: good })).toBe(true);
    expect(await chain.clients.verifyMessage({ address: wallet, message, signature: bad })).toBe(false);
    // It receives tokens: a payment to it is an ordinary transfer.
    const paid = await chain.payAt('2026-03-05T00:00:05Z', token, distributor, [{ to: wallet, amount: 1_000_000n }]);
    expect(paid.timestamp).toBe(unixSeconds('2026-03-05T00:00:05Z'));
    expect(await chain.clients.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] })).toBe(1_000_000n);
  });
});

describe('stopping a test chain', () => {
  it('leaves no process and nothing listening', async () => {
    const chain = await startChain();
    const port = Number(new URL(chain.rpcUrl).port);
    await chain.stop();
    await chain.stop(); // idempotent
    // No process of its group runs (a reaped-late zombie may still count for kill(-pgid, 0)).
    const running = readdirSync('/proc').filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(pgrp) === chain.pid && state !== 'Z';
      } catch {
        return false;
      }
    });
    expect(running).toEqual([]);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
