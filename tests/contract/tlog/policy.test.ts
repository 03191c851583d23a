// tlog-policy files: the example of the standard reads as it says, quorums count as it says, and
// every rule the standard states refuses the file with the line named. This service's `auditor <vkey>`
// lines read too, and play no part in witnessing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { noteVerifierKey } from '../../../contract/log-key.ts';
import { logKeys, parsePolicy, quorumMet } from '../../../contract/tlog/policy.ts';
import { cosignerVerifierKey } from '../../../contract/tlog/vkey.ts';
import type { LogSigner } from '../../../writer/log-signer.ts';
import type { Logger } from '../../../writer/log.ts';
import { Witnessing } from '../../../writer/witnessing.ts';

const key = (seed: number) => Uint8Array.from({ length: 32 }, (_, i) => (seed * 31 + i) & 0xff);
const witness = (name: string, seed: number) => cosignerVerifierKey(`${name}.example`, key(seed));
const logKey = await noteVerifierKey('example.com/log', key(0));

describe('tlog-policy', () => {
  it('reads the two-level example of the standard, comments, tabs and URLs included', async () => {
    const text = [
      `log ${logKey} https://example.com/log/`,
      '  # X operates three witnesses',
      `witness X1 ${await witness('x1', 1)} https://x1.example/`,
      `witness\tX2 ${await witness('x2', 2)}`,
      `witness X3 ${await witness('x3', 3)}   `,
      'group X-witnesses 2 X1 X2 X3',
      '',
      `witness Y1 ${await witness('y1', 4)}`,
      `witness Y2 ${await witness('y2', 5)}`,
      `witness Y3 ${await witness('y3', 6)}`,
      'group Y-witnesses any Y1 Y2 Y3',
      'group X-and-Y all X-witnesses Y-witnesses',
      'quorum X-and-Y',
      '',
    ].join('\n');
    const policy = await parsePolicy(text);
    expect(policy.logs).toHaveLength(1);
    expect(policy.logs[0]!.url).toBe('https://example.com/log/');
    expect(logKeys(policy, 'example.com/log').map((k) => k.publicKey)).toEqual([key(0)]);
    expect(logKeys(policy, 'example.com/other')).toEqual([]);
    expect([...policy.witnesses.keys()]).toEqual(['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3']);
    expect(policy.witnesses.get('X1')!.url).toBe('https://x1.example/');
    expect(policy.witnesses.get('X2')!.url).toBeUndefined();
    expect(policy.groups.get('X-witnesses')).toEqual({ name: 'X-witnesses', threshold: 2, members: ['X1', 'X2', 'X3'] });
    expect(policy.groups.get('X-and-Y')!.threshold).toBe(2);
    expect(policy.quorum).toBe('X-and-Y');

    const met = (...names: string[]) => quorumMet(policy, new Set(names));
    expect(met('X1', 'X2', 'Y3')).toBe(true);
    expect(met('X1', 'X3', 'Y1', 'Y2')).toBe(true);
    expect(met('X1', 'Y1', 'Y2', 'Y3')).toBe(false);
    expect(met('X1', 'X2', 'X3')).toBe(false);
    // Only witnesses count, not a group's name among the cosigners.
    expect(met('X-witnesses', 'Y-witnesses')).toBe(false);
  });

  it('needs nothing with quorum none, and one witness when the quorum names it', async () => {
    expect(quorumMet(await parsePolicy(`log ${logKey}\nquorum none\n`), new Set())).toBe(true);
    const single = await parsePolicy(`witness W ${await witness('w', 1)}\nquorum W`);
    expect(single.logs).toEqual([]);
    expect(quorumMet(single, new Set())).toBe(false);
    expect(quorumMet(single, new Set(['W']))).toBe(true);
  });

  it('reads auditor lines (Ed25519 note keys, type 0x01) wherever they stand, apart from the witnesses and the quorum', async () => {
    const alice = await noteVerifierKey('auditor.example/alice', key(7));
    const bob = await noteVerifierKey('auditor.example/bob', key(8));
    const policy = await parsePolicy(`auditor ${alice}\nlog ${logKey}\nwitness W ${await witness('w', 1)}\n\tauditor ${bob}  \nquorum W\n`);
    expect(policy.auditors.map((a) => [a.vkey, a.key.name, a.key.type])).toEqual([[alice, 'auditor.example/alice', 0x01], [bob, 'auditor.example/bob', 0x01]]);
    expect(policy.auditors[1]!.key.publicKey).toEqual(key(8));
    expect([...policy.witnesses.keys()]).toEqual(['W']);
    expect(policy.logs.map((l) => l.vkey)).toEqual([logKey]);
    // An auditor is no witness: its name never makes the quorum.
    expect(quorumMet(policy, new Set(['auditor.example/alice', 'auditor.example/bob']))).toBe(false);
    expect((await parsePolicy(`log ${logKey}\nquorum none\n`)).auditors).toEqual([]);
  });

  it('lets the writer witness under a policy with auditor lines, asking its witnesses only', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'policy-'));
    try {
      const file = path.join(dir, 'log.policy');
      writeFileSync(file, [
        `log ${logKey}`,
        `auditor ${await noteVerifierKey('auditor.example/alice', key(7))}`,
        `witness W ${await witness('w', 1)} https://w.example/`,
        `witness V ${await witness('v', 2)}`,
        'group G any W V',
        'quorum G',
        '',
      ].join('\n'));
      const signer = { identity: async () => ({ origin: 'example.com/log', vkey: logKey }) } as unknown as LogSigner;
      const warnings: [string, unknown][] = [];
      const log = { warn: (message: string, fields: unknown) => warnings.push([message, fields]), info: () => {}, error: () => {} } as unknown as Logger;
      expect(await Witnessing.load(file, signer, log)).toBeInstanceOf(Witnessing);
      // The one party named without a submission URL that is not asked is the witness V: the auditor is no party to witnessing.
      expect(warnings).toEqual([['witnesses without a submission URL are never asked', { witnesses: 'V' }]]);
      writeFileSync(file, `log ${logKey}\nauditor ${logKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+')}\nquorum none\n`);
      await expect(Witnessing.load(file, signer, log)).rejects.toThrow(`LOG_POLICY (${file}): policy line 2: verifier key example.com/log: the key ID 00000000 does not match the key`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses every policy the standard rules out, naming the line', async () => {
    const w1 = await witness('w1', 1);
    const w2 = await witness('w2', 2);
    const cases: [string, RegExp][] = [
      [`log ${logKey}\n`, /no quorum line/],
      ['quorum none\nquorum none\n', /line 2: .*exactly one quorum/],
      ['quorum W\n', /line 1: "W" is not defined/],
      [`quorum W\nwitness W ${w1}\n`, /line 1: "W" is not defined/],
      [`witness W ${w1}\nwitness W ${w2}\nquorum W\n`, /line 2: the name "W" is already defined/],
      [`witness W ${w1}\nwitness V ${w1.replace('w1.example', 'v.example').replace(/\+[0-9a-f]{8}\+/, '+00000000+')}\nquorum W\n`, /line 2: .*key ID/],
      [`witness W ${w1}\nwitness V ${await cosignerVerifierKey('v.example', key(1))}\nquorum W\n`, /line 2: this witness key is already listed/],
      [`log ${logKey}\nlog ${await noteVerifierKey('example.com/other', key(0))}\nquorum none\n`, /line 2: this log key is already listed/],
      [`witness W ${w1}\ngroup G any W W\nquorum G\n`, /line 2: a name is listed twice/],
      [`witness W ${w1}\ngroup G 2 W\nquorum G\n`, /line 2: the threshold 2 is more than the 1 members/],
      [`witness W ${w1}\ngroup G 0 W\nquorum G\n`, /line 2: "0" is not all, any or a number/],
      [`witness W ${w1}\ngroup G any\nquorum G\n`, /line 2: expected "group/],
      [`witness W ${w1}\ngroup G any W none\nquorum G\n`, /line 2: "none" cannot be a group member/],
      [`witness W ${w1}\ngroup G any W H\ngroup H any W\nquorum G\n`, /line 2: "H" is not defined/],
      [`witness none ${w1}\nquorum none\n`, /line 1: the name "none" is already defined/],
      [`witness W ${logKey}\nquorum W\n`, /line 1: a witness key has signature type 0x04, not 0x01/],
      [`log ${w1}\nquorum none\n`, /line 1: a log key has signature type 0x01, not 0x04/],
      [`witness W ${w1} ftp://w.example/\nquorum W\n`, /line 1: .*not an http\(s\) URL/],
      [`witness W ${w1} https://w.example/ extra\nquorum W\n`, /line 1: expected "witness/],
      [`witness W ${w1}\r\nquorum W\n`, /line 1: only tab, newline and printable/],
      ['logs x\nquorum none\n', /line 1: unknown keyword "logs"/],
      ['log not-a-key\nquorum none\n', /line 1: .*not a verifier key/],
      [`auditor\nquorum none\n`, /line 1: expected "auditor <vkey>"/],
      [`auditor alice ${logKey}\nquorum none\n`, /line 1: expected "auditor <vkey>"/],
      [`auditor ${logKey} https://auditor.example/\nquorum none\n`, /line 1: expected "auditor <vkey>"/],
      [`quorum none\nauditor ${w1}\n`, /line 2: an auditor key has signature type 0x01, not 0x04/],
      [`auditor ${logKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+')}\nquorum none\n`, /line 1: .*key ID/],
      [`auditor ${logKey}\nauditor ${await noteVerifierKey('auditor.example/other', key(0))}\nquorum none\n`, /line 2: this auditor key is already listed/],
      ['auditor not-a-key\nquorum none\n', /line 1: .*not a verifier key/],
    ];
    for (const [text, error] of cases) await expect(parsePolicy(text), text).rejects.toThrow(error);
  });
});
