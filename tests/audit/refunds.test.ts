// Refunds are not rewards: a sponsorship-like contract (tests/fixtures/chain/Sponsorship.sol) pays the
// wallet in one night by its distribute path (a Transfer and its DistributedRewards event for the
// wallet) and by its refund path (a Transfer only), apart and in one transaction. A payer row that
// requires the event counts the rewards and fails each refund with its own sentence; a row without it
// counts the refunds too.
import { readFileSync } from 'node:fs';
import { type Abi, type AbiEvent, type Address, erc20Abi, getAddress, type Hash, parseEventLogs } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chain, checkTransfer, connectChain, type UsedLogs } from '../../audit/chain.ts';
import { parsePayers, type PayerRow } from '../../contract/audit/payers.ts';
import { type ChainFixtures, FIXTURES_FILE } from '../fixtures/chain/compile.ts';
import { startChain, type TestChain, unixSeconds } from '../support/chain.ts';

const SPONSORSHIP = (JSON.parse(readFileSync(FIXTURES_FILE, 'utf8')) as ChainFixtures).contracts.Sponsorship;
const sponsorshipAbi = SPONSORSHIP.abi as Abi;
const NIGHT = '2026-05-02';
const LABEL = 'transfer 1 of 1';
const MARKET = `0x${'ab'.repeat(32)}`;
const REFUND = `${LABEL}: its Transfer comes from the payer of row 1 of the payer list without that contract's DistributedRewards event for the wallet in the same transaction: a refund or withdrawal, not a reward`;
const HUMAN_READABLE = 'event DistributedRewards(address indexed user, uint256 amount)';

describe('a sponsorship-like contract with a distribute path and a refund path', () => {
  let chain: TestChain;
  let audit: Chain;
  let token: Address;
  let sponsorship: Address;
  let peer: Address;
  let wallet: string;
  /** The rewards: 12.34 to the wallet, 7 to another maker. */
  let distributed: Hash;
  /** A sponsor's refund of 5 to the wallet, alone. */
  let refunded: Hash;
  /** One transaction: 1 reward to the other maker, then a refund of 5 to the wallet. */
  let settledOther: Hash;
  /** One transaction: a reward of 3 to the wallet, then a refund of 5 to it. */
  let settledBoth: Hash;
  /** One transaction: an unlisted copy of the contract pays the wallet a reward of 5, and the listed one refunds it 5. */
  let besidePeer: Hash;

  /** Sends one call to the sponsorship contract in a block mined at `iso`; throws unless it succeeded. */
  async function callAt(iso: string, functionName: string, args: readonly unknown[]): Promise<Hash> {
    await chain.clients.setNextBlockTimestamp({ timestamp: unixSeconds(iso) });
    const hash = await chain.clients.writeContract({ address: sponsorship, abi: sponsorshipAbi, functionName, args, account: chain.accounts[0]!, chain: chain.clients.chain });
    if ((await chain.clients.waitForTransactionReceipt({ hash })).status !== 'success') throw new Error(`${functionName} reverted`);
    return hash;
  }

  /** The payer list: one row for the sponsorship contract, with `event` when given, read by the real parser. */
  const rows = (event?: unknown): PayerRow[] => parsePayers(JSON.stringify([
    { chain_id: 137, token, payer: sponsorship, from: '2026-05-01', until: null, source: 'https://example.org/test', ...(event ? { event } : {}) },
  ]), 'payers.json');
  const check = (payers: PayerRow[], tx: Hash, amount: bigint, used: UsedLogs = new Set()) =>
    checkTransfer(audit, payers, NIGHT, wallet, { tx, amount: amount.toString() }, used, LABEL);

  beforeAll(async () => {
    chain = await startChain({ start: '2026-05-01T00:00:00Z' });
    audit = await connectChain(chain.rpcUrl);
    token = await chain.deployToken();
    const deploy = async () => {
      const hash = await chain.clients.deployContract({ abi: sponsorshipAbi, bytecode: SPONSORSHIP.bytecode, account: chain.accounts[0]!, chain: chain.clients.chain });
      return getAddress((await chain.clients.waitForTransactionReceipt({ hash })).contractAddress!);
    };
    [sponsorship, peer] = [await deploy(), await deploy()];
    await chain.mint(token, sponsorship, 100_000_000n);
    await chain.mint(token, peer, 100_000_000n);
    wallet = chain.accounts[1]!.address.toLowerCase();
    const other = chain.accounts[2]!.address;
    distributed = await callAt(`${NIGHT}T00:15:05Z`, 'distributeRewards', [token, [other, wallet], [7_000_000n, 12_340_000n]]);
    refunded = await callAt(`${NIGHT}T00:20:00Z`, 'refund', [token, MARKET, wallet, 5_000_000n]);
    settledOther = await callAt(`${NIGHT}T00:21:00Z`, 'settle', [token, [other], [1_000_000n], MARKET, wallet, 5_000_000n]);
    settledBoth = await callAt(`${NIGHT}T00:22:00Z`, 'settle', [token, [wallet], [3_000_000n], MARKET, wallet, 5_000_000n]);
    besidePeer = await callAt(`${NIGHT}T00:23:00Z`, 'refundBeside', [peer, token, [wallet], [5_000_000n], MARKET, wallet, 5_000_000n]);
  });
  afterAll(async () => {
    await chain?.stop();
  });

  it('both paths pay the wallet a Transfer from the contract; only the distribute path names it in DistributedRewards', async () => {
    const paid = async (hash: Hash) => {
      const { logs } = await chain.clients.getTransactionReceipt({ hash });
      const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs }).filter((l) => l.args.from === sponsorship && l.args.to.toLowerCase() === wallet);
      const rewards = parseEventLogs({ abi: sponsorshipAbi, logs }).filter((l) => l.eventName === 'DistributedRewards');
      return { transfers: transfers.map((l) => l.args.value), rewards: rewards.map((l) => l.args) };
    };
    expect(await paid(distributed)).toEqual({ transfers: [12_340_000n], rewards: [{ user: chain.accounts[2]!.address, amount: 7_000_000n }, { user: getAddress(wallet), amount: 12_340_000n }] });
    expect(await paid(refunded)).toEqual({ transfers: [5_000_000n], rewards: [] });
    expect(await paid(settledOther)).toEqual({ transfers: [5_000_000n], rewards: [{ user: chain.accounts[2]!.address, amount: 1_000_000n }] });
  });

  it('without the event requirement, counts each refund as a reward (the hole)', async () => {
    expect(await check(rows(), distributed, 12_340_000n)).toBeUndefined();
    expect(await check(rows(), refunded, 5_000_000n)).toBeUndefined();
    expect(await check(rows(), settledOther, 5_000_000n)).toBeUndefined();
  });

  it('requiring the reward-distribution event, counts the distribution and fails the refund with its own sentence', async () => {
    const requiring = rows({ abi: HUMAN_READABLE, recipient: 'user', amount: 'amount' });
    expect(await check(requiring, distributed, 12_340_000n)).toBeUndefined();
    expect(await check(requiring, refunded, 5_000_000n)).toBe(REFUND);
    // The event in the refund's own transaction names another maker: it proves nothing for this wallet.
    expect(await check(requiring, settledOther, 5_000_000n)).toBe(REFUND);
    expect(await check(rows({ abi: HUMAN_READABLE, recipient: 'user' }), settledOther, 5_000_000n)).toBe(REFUND);
    // The same event for the wallet and that amount, emitted by another contract, is not the payer's.
    expect(await check(requiring, besidePeer, 5_000_000n)).toBe(REFUND);
    expect(await check(rows(), besidePeer, 5_000_000n)).toBeUndefined();
  });

  it('holds the event to the amount when the row names it, and pays each event once', async () => {
    const byAmount = rows({ abi: HUMAN_READABLE, recipient: 'user', amount: 'amount' });
    expect(await check(byAmount, settledBoth, 3_000_000n)).toBeUndefined();
    expect(await check(byAmount, settledBoth, 5_000_000n)).toBe(REFUND);
    // Naming the recipient only, the wallet's reward event also covers the refund beside it.
    const used: UsedLogs = new Set();
    const byRecipient = rows({ abi: HUMAN_READABLE, recipient: 'user' });
    expect(await check(byRecipient, settledBoth, 5_000_000n, used)).toBeUndefined();
    // That one event has been used: the reward itself then finds none left.
    expect(await check(byRecipient, settledBoth, 3_000_000n, used)).toBe(REFUND);
  });

  it('reads the event from the contract\'s JSON ABI item as well', async () => {
    const item = sponsorshipAbi.find((i): i is AbiEvent => i.type === 'event' && i.name === 'DistributedRewards')!;
    const requiring = rows({ abi: item, recipient: 'user', amount: 'amount' });
    expect(requiring[0]!.event?.abi.inputs).toEqual([{ type: 'address', name: 'user', indexed: true }, { type: 'uint256', name: 'amount' }]);
    expect(await check(requiring, distributed, 12_340_000n)).toBeUndefined();
    expect(await check(requiring, refunded, 5_000_000n)).toBe(REFUND);
  });
});
