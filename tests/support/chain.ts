// A private Polygon-like chain for tests: anvil (run by anvil.ts) with chain id 137, and the contracts
// of tests/fixtures/chain/ (a 6-decimal dollar token, a batch-paying distributor, an EIP-1271 wallet)
// to make reward transfers at chosen times.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type Address,
  type Hash,
  createTestClient,
  defineChain,
  getAddress,
  http,
  parseAbi,
  publicActions,
  walletActions,
} from 'viem';
import { type HDAccount, mnemonicToAccount } from 'viem/accounts';
import { polygon } from 'viem/chains';
import type { ChainFixtures, ContractName } from '../fixtures/chain/compile.ts';
import { startAnvil } from './anvil.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = JSON.parse(
  readFileSync(path.join(ROOT, 'tests/fixtures/chain/contracts.json'), 'utf8'),
) as ChainFixtures;

/** anvil's default mnemonic: its funded dev accounts are this mnemonic's first addresses. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
const ACCOUNT_COUNT = 10;

/** The typed ABIs of the fixture contracts (tests/audit/chain-fixtures.test.ts checks them against solc's). */
export const testUsdAbi = parseAbi([
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'function allowance(address, address) view returns (uint256)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function balanceOf(address) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function mint(address to, uint256 value)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function totalSupply() view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
]);
export const distributorAbi = parseAbi([
  'function pay(address token, address[] to, uint256[] amounts)',
]);
export const wallet1271Abi = parseAbi([
  'constructor(address owner_)',
  'function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)',
  'function owner() view returns (address)',
]);

export interface StartChainOptions {
  /** The genesis block's time (anvil --timestamp), whole seconds; default 2026-01-01T00:00:00Z. Blocks
   * mined without a set time follow it at the wall clock's pace, so keep it before every *At time. */
  start?: string | Date;
}

export interface Payment {
  to: Address;
  /** In the token's base units (6 decimals: 1_000_000n is one dollar). */
  amount: bigint;
}

export interface SendOptions {
  /** The account that sends the transaction; default accounts[0]. */
  from?: HDAccount;
}

/** A mined transaction. */
export interface Mined {
  hash: Hash;
  blockNumber: bigint;
  /** The block's timestamp, Unix seconds. */
  timestamp: bigint;
}

export type ChainClients = ReturnType<typeof createClients>;

export interface TestChain {
  rpcUrl: string;
  /** The anvil wrapper's pid, which is also its process group's id. */
  pid: number;
  /** A viem test client (anvil mode) with the public and wallet actions. */
  clients: ChainClients;
  /** anvil's ten funded dev accounts, with their private keys (from ANVIL_MNEMONIC). */
  accounts: HDAccount[];
  /** Deploys TestUSD (6 decimals, open mint); returns its address. */
  deployToken(opts?: SendOptions): Promise<Address>;
  /** Deploys a Distributor; returns its address. */
  deployDistributor(opts?: SendOptions): Promise<Address>;
  /** Deploys a Wallet1271 whose signer is `owner`; returns its address. */
  deployWallet1271(owner: Address, opts?: SendOptions): Promise<Address>;
  /** Mints `amount` base units of `token` to `to`, now. */
  mint(token: Address, to: Address, amount: bigint, opts?: SendOptions): Promise<Mined>;
  /** At `isoTime` (the next block's timestamp: not before the latest block's, which it may equal), the
   * distributor pays each recipient in one transaction (one Transfer event each, from the distributor);
   * throws unless it succeeded. */
  payAt(isoTime: string, token: Address, distributor: Address, payments: Payment[], opts?: SendOptions): Promise<Mined>;
  /** The same pay transaction, mined at `isoTime` with status 0 (reverted, no Transfer event): the
   * payments must add up to more than the distributor holds (else it throws before sending). */
  failedPayAt(isoTime: string, token: Address, distributor: Address, payments: Payment[], opts?: SendOptions): Promise<Mined>;
  /** At `isoTime`, a plain ERC-20 transfer from the account `from`; throws unless it succeeded. */
  transferAt(isoTime: string, token: Address, from: HDAccount, to: Address, amount: bigint): Promise<Mined>;
  /** Kills anvil's process group and waits until it is gone and its port refuses connections. Idempotent. */
  stop(): Promise<void>;
}

let devAccounts: HDAccount[] | undefined;
/** Derived once: each derivation runs the mnemonic's key stretching. */
function anvilAccounts(): HDAccount[] {
  devAccounts ??= Array.from({ length: ACCOUNT_COUNT }, (_, addressIndex) =>
    mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex }),
  );
  return devAccounts;
}

function createClients(rpcUrl: string) {
  // Polygon's id and currency, without its mainnet RPC and contract addresses (none exist here).
  const chain = defineChain({ ...polygon, rpcUrls: { default: { http: [rpcUrl] } }, contracts: {} });
  return createTestClient({ mode: 'anvil', chain, transport: http(rpcUrl, { retryCount: 0 }), pollingInterval: 50 })
    .extend(publicActions)
    .extend(walletActions);
}

/** Unix seconds of an ISO 8601 time with an explicit zone and whole seconds. */
export function unixSeconds(iso: string | Date): bigint {
  const ms = iso instanceof Date ? iso.getTime() : /(Z|[+-]\d\d:\d\d)$/.test(iso) ? Date.parse(iso) : Number.NaN;
  if (!Number.isFinite(ms) || ms % 1000 !== 0) {
    throw new Error(`not a time with a zone and whole seconds: ${String(iso)}`);
  }
  return BigInt(ms / 1000);
}

/** Starts a fresh chain (see TestChain). */
export async function startChain(opts: StartChainOptions = {}): Promise<TestChain> {
  const genesis = unixSeconds(opts.start ?? '2026-01-01T00:00:00Z');
  const { pid, port, stop } = await startAnvil(genesis);
  const rpcUrl = `http://127.0.0.1:${port}`;
  const clients = createClients(rpcUrl);
  const accounts = anvilAccounts();

  try {
    // It answers, and its dev accounts are the ones derived here.
    const [chainId, addresses] = await Promise.all([clients.getChainId(), clients.getAddresses()]);
    if (chainId !== 137) throw new Error(`anvil's chain id is ${chainId}`);
    const expected = accounts.map((a) => a.address.toLowerCase());
    if (addresses.map((a) => a.toLowerCase()).join() !== expected.join()) {
      throw new Error(`anvil's accounts are not the mnemonic's: ${addresses.join(', ')}`);
    }
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }

  const sender = (opts?: SendOptions): HDAccount => opts?.from ?? (accounts[0] as HDAccount);

  async function mined(hash: Hash, want: 'success' | 'reverted', at?: bigint): Promise<Mined> {
    const receipt = await clients.waitForTransactionReceipt({ hash });
    if (receipt.status !== want) throw new Error(`transaction ${hash} is ${receipt.status}, not ${want}`);
    const block = await clients.getBlock({ blockNumber: receipt.blockNumber });
    if (at !== undefined && block.timestamp !== at) {
      throw new Error(`transaction ${hash} was mined at ${block.timestamp}, not ${at}`);
    }
    return { hash, blockNumber: receipt.blockNumber, timestamp: block.timestamp };
  }

  /** Sets the next block's time; anvil takes the latest block's own time again, never an earlier one. */
  async function nextBlockAt(isoTime: string): Promise<bigint> {
    const at = unixSeconds(isoTime);
    const latest = await clients.getBlock({ blockTag: 'latest' });
    if (at < latest.timestamp) {
      const was = new Date(Number(latest.timestamp) * 1000).toISOString();
      throw new Error(`${isoTime} is before the latest block's time (${was}): a chain's time only goes forward`);
    }
    await clients.setNextBlockTimestamp({ timestamp: at });
    return at;
  }

  async function deployed(name: ContractName, hash: Hash): Promise<Address> {
    const receipt = await clients.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deploying ${name} failed`);
    return getAddress(receipt.contractAddress);
  }

  async function sendPay(isoTime: string, token: Address, distributor: Address, payments: Payment[], want: 'success' | 'reverted', opts?: SendOptions): Promise<Mined> {
    const account = sender(opts);
    const args = [token, payments.map((p) => p.to), payments.map((p) => p.amount)] as const;
    if (want === 'reverted') {
      const held = await clients.readContract({ address: token, abi: testUsdAbi, functionName: 'balanceOf', args: [distributor] });
      const total = payments.reduce((sum, p) => sum + p.amount, 0n);
      if (total <= held) throw new Error(`failedPayAt: the distributor holds ${held}, enough for ${total}`);
    }
    const at = await nextBlockAt(isoTime);
    // An explicit gas limit: no estimate, which would refuse a payment bound to revert.
    const hash = await clients.writeContract({
      address: distributor,
      abi: distributorAbi,
      functionName: 'pay',
      args,
      account,
      ...(want === 'reverted' ? { gas: 1_000_000n } : {}),
    });
    return mined(hash, want, at);
  }

  return {
    rpcUrl,
    pid,
    clients,
    accounts,
    stop,
    async deployToken(opts) {
      const { bytecode } = FIXTURES.contracts.TestUSD;
      return deployed('TestUSD', await clients.deployContract({ abi: [], bytecode, account: sender(opts) }));
    },
    async deployDistributor(opts) {
      const { bytecode } = FIXTURES.contracts.Distributor;
      return deployed('Distributor', await clients.deployContract({ abi: [], bytecode, account: sender(opts) }));
    },
    async deployWallet1271(owner, opts) {
      const { bytecode } = FIXTURES.contracts.Wallet1271;
      return deployed('Wallet1271', await clients.deployContract({ abi: wallet1271Abi, bytecode, args: [owner], account: sender(opts) }));
    },
    async mint(token, to, amount, opts) {
      const hash = await clients.writeContract({ address: token, abi: testUsdAbi, functionName: 'mint', args: [to, amount], account: sender(opts) });
      return mined(hash, 'success');
    },
    payAt: (isoTime, token, distributor, payments, opts) => sendPay(isoTime, token, distributor, payments, 'success', opts),
    failedPayAt: (isoTime, token, distributor, payments, opts) => sendPay(isoTime, token, distributor, payments, 'reverted', opts),
    async transferAt(isoTime, token, from, to, amount) {
      const at = await nextBlockAt(isoTime);
      const hash = await clients.writeContract({ address: token, abi: testUsdAbi, functionName: 'transfer', args: [to, amount], account: from });
      return mined(hash, 'success', at);
    },
  };
}
