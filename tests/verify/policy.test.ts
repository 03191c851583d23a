// The verifier reads C2SP tlog-policy files to the letter (https://c2sp.org/tlog-policy) and decides
// when a quorum had cosigned from the cosignature/v1 lines it verifies
// (https://c2sp.org/tlog-cosignature), with keys made here.
import { describe, expect, it } from 'vitest';
import { parseVkey } from '../../log-reader/notes.ts';
import { cosignedAt, parsePolicy, quorumMet, quorumTime } from '../../verify/policy.ts';
import { cosignature, makeKey, signCheckpoint } from '../support/verifier.ts';

const log = makeKey('example.org/log', 0x01);
const w = Object.fromEntries(['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3'].map((name) => [name, makeKey(`witness.example/${name.toLowerCase()}`, 0x04)]));
const policy = (text: string) => parsePolicy(Buffer.from(text), 'policy.txt');
const auditors = [makeKey('auditor.example/alice', 0x01), makeKey('auditor.example/bob', 0x01)];

/** The example of the text: two levels of groups. */
const EXAMPLE = `log ${log.vkey} https://example.org/log/
# the X operator's witnesses
witness X1 ${w.X1!.vkey}
\twitness X2 ${w.X2!.vkey} https://x2.example/
witness X3 ${w.X3!.vkey}   
group X-witnesses 2 X1 X2 X3

witness Y1 ${w.Y1!.vkey}
witness Y2 ${w.Y2!.vkey}
witness Y3 ${w.Y3!.vkey}
group Y-witnesses any Y1 Y2 Y3

group X-and-Y all X-witnesses Y-witnesses
quorum X-and-Y`;

describe('tlog-policy files', () => {
  it('reads logs, witnesses with and without URLs, groups of all, any and k, comments, blank lines and any whitespace', () => {
    const parsed = policy(EXAMPLE);
    expect(parsed.logs.map((k) => k.name)).toEqual(['example.org/log']);
    expect([...parsed.witnesses.keys()]).toEqual(['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3']);
    expect(parsed.witnesses.get('X2')!.name).toBe('witness.example/x2');
    expect(Object.fromEntries(parsed.groups)).toEqual({
      'X-witnesses': { k: 2, members: ['X1', 'X2', 'X3'] },
      'Y-witnesses': { k: 1, members: ['Y1', 'Y2', 'Y3'] },
      'X-and-Y': { k: 2, members: ['X-witnesses', 'Y-witnesses'] },
    });
    expect(parsed.quorum).toBe('X-and-Y');
    expect(parsed.auditors).toEqual([]);
    expect(policy('quorum none\n')).toMatchObject({ logs: [], quorum: 'none', auditors: [] });
  });

  it('reads auditor lines, anywhere in the file: the auditors whose attestations count, no witness among them', () => {
    const withAuditors = policy(`auditor ${auditors[0]!.vkey}\n${EXAMPLE}\n\tauditor  ${auditors[1]!.vkey}  \n`);
    expect(withAuditors.auditors.map((k) => [k.name, k.type])).toEqual([['auditor.example/alice', 0x01], ['auditor.example/bob', 0x01]]);
    expect(withAuditors.auditors.map((k) => k.raw)).toEqual(auditors.map((a) => a.raw));
    // The witnesses and the quorum are the same as without them.
    expect([...withAuditors.witnesses.keys()]).toEqual([...policy(EXAMPLE).witnesses.keys()]);
    expect(quorumMet(withAuditors, new Set(['X1', 'X2', 'Y3']))).toBe(true);
    expect(quorumMet(withAuditors, new Set(['auditor.example/alice', 'auditor.example/bob']))).toBe(false);
  });

  it('decides the quorum as k of n members, down the groups', () => {
    const parsed = policy(EXAMPLE);
    const met = (...names: string[]) => quorumMet(parsed, new Set(names));
    expect(met('X1', 'X2', 'Y3')).toBe(true);
    expect(met('X1', 'X3', 'Y1', 'Y2')).toBe(true);
    expect(met('X1', 'Y1', 'Y2', 'Y3')).toBe(false);
    expect(met('X1', 'X2', 'X3')).toBe(false);
    expect(met()).toBe(false);
    expect(quorumMet(policy('quorum none'), new Set())).toBe(true);
    expect(quorumMet(policy(`witness A ${w.X1!.vkey}\nquorum A`), new Set(['A']))).toBe(true);
  });

  it('dates a quorum by the earliest cosignature time at which the witnesses that had cosigned satisfy it', () => {
    const parsed = policy(EXAMPLE);
    const at = (times: Record<string, number>) => quorumTime(parsed, new Map(Object.entries(times)));
    // Y1 at 5, X1 at 10, X3 at 20: the second X witness completes the quorum at 20, whatever came later.
    expect(at({ X1: 10, X2: 30, X3: 20, Y1: 5, Y2: 40 })).toBe(20);
    // The Y group is met last, at 50.
    expect(at({ X1: 10, X2: 11, Y3: 50 })).toBe(50);
    expect(at({ X1: 10, X2: 11 })).toBeUndefined();
  });

  it.each([
    ['an unknown keyword', `log ${log.vkey}\nwitnes A ${w.X1!.vkey}\nquorum none`, 'line 2 starts with "witnes", not log, witness, group, quorum or auditor'],
    ['an auditor line without a key', `quorum none\nauditor`, 'line 2 is not "auditor <vkey>"'],
    ['an auditor line with a name and a key', `auditor alice ${auditors[0]!.vkey}\nquorum none`, 'line 1 is not "auditor <vkey>"'],
    ['an auditor line with a URL', `auditor ${auditors[0]!.vkey} https://auditor.example/\nquorum none`, 'line 1 is not "auditor <vkey>"'],
    ['a witness key as an auditor\'s', `auditor ${w.X1!.vkey}\nquorum none`, 'line 1 has an auditor key that is not a vkey of type 0x01: its signature type is 0x04, not 0x01'],
    ['an auditor key whose key ID does not match', `auditor ${auditors[0]!.vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+')}\nquorum none`, 'line 1 has an auditor key that is not a vkey of type 0x01: its key ID does not match its name and key'],
    ['an auditor key listed twice', `auditor ${auditors[0]!.vkey}\nquorum none\nauditor ${auditors[0]!.vkey}`, 'line 3 lists an auditor key a second time'],
    ['a name used before it is defined', `group G any A\nwitness A ${w.X1!.vkey}\nquorum G`, 'line 1 names "A", which no earlier line defines as a witness or group'],
    ['a quorum naming a later witness', `quorum A\nwitness A ${w.X1!.vkey}`, 'line 1 names "A", which no earlier line defines'],
    ['two quorum lines', `witness A ${w.X1!.vkey}\nquorum A\nquorum none`, 'line 3 is a second quorum line (the first is line 2)'],
    ['no quorum line', `witness A ${w.X1!.vkey}\n`, 'it has no quorum line'],
    ['a name defined twice', `witness A ${w.X1!.vkey}\nwitness A ${w.X2!.vkey}\nquorum A`, 'line 2 defines "A", a name already defined'],
    ['the reserved name none', `witness none ${w.X1!.vkey}\nquorum none`, 'line 1 defines "none", a name already defined'],
    ['a witness key listed twice', `witness A ${w.X1!.vkey}\nwitness B ${w.X1!.vkey}\nquorum A`, 'line 2 lists a witness key a second time'],
    ['a log key listed twice', `log ${log.vkey}\nlog ${log.vkey}\nquorum none`, 'line 2 lists a log key a second time'],
    ['a member listed twice', `witness A ${w.X1!.vkey}\ngroup G 1 A A\nquorum G`, 'line 2 lists "A" twice'],
    ['none as a member', `witness A ${w.X1!.vkey}\ngroup G any A none\nquorum G`, 'line 2 names "none", which no earlier line defines as a witness or group'],
    ['k above n', `witness A ${w.X1!.vkey}\ngroup G 2 A\nquorum G`, 'line 2 has the threshold "2", not all, any or a number from 1 to 1'],
    ['k of zero', `witness A ${w.X1!.vkey}\ngroup G 0 A\nquorum G`, 'line 2 has the threshold "0", not all, any or a number from 1 to 1'],
    ['a group without members', `witness A ${w.X1!.vkey}\ngroup G any\nquorum A`, 'line 2 is not "group <name> all|any|<k> <name>..."'],
    ['a log key where a witness key goes', `witness A ${log.vkey}\nquorum A`, 'line 1 has a witness key that is not a vkey of type 0x04: its signature type is 0x01, not 0x04'],
    ['a witness key where the log key goes', `log ${w.X1!.vkey}\nquorum none`, 'line 1 has a log key that is not a vkey of type 0x01: its signature type is 0x04, not 0x01'],
    ['a vkey whose key ID does not match', `log ${log.vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+')}\nquorum none`, 'line 1 has a log key that is not a vkey of type 0x01: its key ID does not match its name and key'],
    ['extra words', `log ${log.vkey} https://a.example/ more\nquorum none`, 'line 1 is not "log <vkey> [<url>]"'],
    ['a control character', `quorum none\r\n`, 'line 1 holds a control character'],
  ])('refuses %s, naming the line', (_, text, why) => {
    expect(() => policy(text)).toThrow(`the policy policy.txt is not a C2SP tlog-policy: ${why}`);
  });
});

describe('cosignature/v1 lines', () => {
  const body = 'example.org/log\n12\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
  const note = (lines: string) => {
    const text = signCheckpoint(body, log) + lines;
    return { text: body, signatures: text.slice(body.length + 1, -1).split('\n').map((line) => {
      const [, name, b64] = /^\u2014 (\S+) (\S+)$/.exec(line)!;
      const bytes = Buffer.from(b64!, 'base64');
      return { name: name!, id: bytes.subarray(0, 4), bytes: bytes.subarray(4) };
    }) };
  };
  const key = (k: typeof w.X1) => parseVkey(k!.vkey, 0x04) as Exclude<ReturnType<typeof parseVkey>, string>;

  it('verify against the witness key, giving the time they carry; other keys\' lines are ignored', () => {
    const checkpoint = note(cosignature(body, w.X1!, 1_700_000_000) + cosignature(body, w.X2!, 1_700_000_500));
    expect(cosignedAt(checkpoint, key(w.X1), 'the checkpoint')).toBe(1_700_000_000);
    expect(cosignedAt(checkpoint, key(w.X2), 'the checkpoint')).toBe(1_700_000_500);
    expect(cosignedAt(checkpoint, key(w.X3), 'the checkpoint')).toBeUndefined();
    // A witness key of the same name but another key ID is another witness.
    const namesake = makeKey(w.X1!.name, 0x04);
    expect(cosignedAt(checkpoint, key(namesake), 'the checkpoint')).toBeUndefined();
  });

  it('fail when the line does not verify: another checkpoint, another time, or a key of another type', () => {
    const other = body.replace('\n12\n', '\n13\n');
    expect(() => cosignedAt(note(cosignature(other, w.X1!, 1_700_000_000)), key(w.X1), 'the checkpoint')).toThrow("the checkpoint's cosignature by the witness witness.example/x1 does not verify");
    const line = cosignature(body, w.X1!, 1_700_000_000);
    const bytes = Buffer.from(line.split(' ')[2]!.trim(), 'base64');
    bytes.writeBigUInt64BE(1_700_000_001n, 4);
    expect(() => cosignedAt(note(`\u2014 ${w.X1!.name} ${bytes.toString('base64')}\n`), key(w.X1), 'the checkpoint')).toThrow('does not verify');
    // The log's own kind of signature (no timestamp) under the witness's key ID is no cosignature.
    const plain = signCheckpoint(body, { ...w.X1!, id: key(w.X1).id }).split('\n').at(-2)!;
    expect(() => cosignedAt(note(`${plain}\n`), key(w.X1), 'the checkpoint')).toThrow('does not verify');
  });
});
