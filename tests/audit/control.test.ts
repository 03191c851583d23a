// The control proof on a real chain (anvil): an EOA wallet's own signature of the control message is
// accepted by recovering its address, another key's is not; a contract wallet is accepted only
// through its EIP-1271 isValidSignature.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlMessage } from '../../contract/audit/control.ts';
import { connectChain, controls, type Chain } from '../../audit/chain.ts';
import { startChain, type TestChain } from '../support/chain.ts';

let chain: TestChain;
let rpc: Chain;

beforeAll(async () => {
  chain = await startChain();
  rpc = await connectChain(chain.rpcUrl);
});
afterAll(async () => {
  await chain?.stop();
});

const messageFor = (wallet: string) => controlMessage({ origin: 'stats.example.org/log', logKey: 'stats.example.org/log+01234567+AQ==', wallet, nonce: 'nonce-for-a-test' });

describe('the control proof', () => {
  it('accepts an EOA\'s own signature and refuses another key\'s', async () => {
    const [, eoa, other] = chain.accounts;
    const message = messageFor(eoa!.address);
    expect(rpc.chainId).toBe(137);
    expect(await controls(rpc, eoa!.address.toLowerCase(), message, await eoa!.signMessage({ message }))).toBe(true);
    expect(await controls(rpc, eoa!.address.toLowerCase(), message, await other!.signMessage({ message }))).toBe(false);
    // A signature of another message (another nonce) proves nothing for this one.
    expect(await controls(rpc, eoa!.address.toLowerCase(), message, await eoa!.signMessage({ message: messageFor(other!.address) }))).toBe(false);
  });

  it('accepts a contract wallet through EIP-1271 only when the wallet says so', async () => {
    const [, , , owner, other] = chain.accounts;
    const wallet = (await chain.deployWallet1271(owner!.address)).toLowerCase();
    const message = messageFor(wallet);
    expect(await controls(rpc, wallet, message, await owner!.signMessage({ message }))).toBe(true);
    expect(await controls(rpc, wallet, message, await other!.signMessage({ message }))).toBe(false);
  });
});
