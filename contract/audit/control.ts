// The text the wallet's owner signs to show an auditor they control it (EIP-191 personal_sign,
// https://eips.ethereum.org/EIPS/eip-191). It names the log (origin and verifier key), so a signature
// made for one log is no proof for another, and the auditor's own nonce, so an old signature cannot
// be replayed to a new auditor.
import { ADDRESS } from './commitment.ts';

/** An auditor's nonce: 8 to 128 letters, digits, dots, colons, underscores or hyphens (one line of text). */
export const NONCE = /^[A-Za-z0-9._:-]{8,128}$/;

export interface ControlSubject { origin: string; logKey: string; wallet: string; nonce: string }

export function controlMessage(s: ControlSubject): string {
  if (!NONCE.test(s.nonce)) throw new Error('a nonce is 8 to 128 letters, digits, dots, colons, underscores or hyphens');
  if (!ADDRESS.test(s.wallet.toLowerCase())) throw new Error('the wallet is not a 0x address of 40 hex digits');
  return [
    'public-stats wallet control v1',
    `log ${s.origin}`,
    `log-key ${s.logKey}`,
    `wallet ${s.wallet.toLowerCase()}`,
    `nonce ${s.nonce}`,
  ].join('\n');
}
