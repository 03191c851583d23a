// The vault of the commitments' openings (contract/audit/transfer-vault.ts) over a store of sealed
// rows, as the database keeps them: random salts that no key derives, the wallet in force kept by any
// vault with the same key, and rows that reveal nothing without the key and open nothing but their
// own commitment.
import { describe, expect, it } from 'vitest';
import { OpeningsKey, SealedVault, UnopenableOpening, type OpeningStore, type SealedOpening } from '../../contract/audit/transfer-vault.ts';

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/** An append-only store in memory, shared by whoever is handed it (as writers share the database). */
function memoryStore(): OpeningStore & { rows: Map<string, SealedOpening> } {
  const rows = new Map<string, SealedOpening>();
  return {
    rows,
    async find(commitment) { return rows.get(commitment); },
    async add(opening) {
      if (rows.has(opening.commitment)) throw new Error('duplicate key');
      rows.set(opening.commitment, opening);
    },
  };
}

const newKey = () => OpeningsKey.parse(OpeningsKey.generate());

describe('the sealed vault', () => {
  it('lets a second writer with the same key keep the wallet in force and open the first one\'s nights', async () => {
    const key = OpeningsKey.generate();
    const store = memoryStore();
    const first = new SealedVault(OpeningsKey.parse(key), store);
    const w1 = await first.wallet(A, undefined);
    const n1 = await first.night('2026-03-02', w1, [{ tx: tx(1), amount: 1_234_567n }]);
    const replaced: string[] = [];
    const standby = new SealedVault(OpeningsKey.parse(key), store, (why) => replaced.push(why));
    const w2 = await standby.wallet(A.toUpperCase().replace('0X', '0x'), w1.commitment);
    expect(w2).toEqual(w1);
    expect(replaced).toEqual([]);
    expect(await standby.openNight(n1.commitment)).toEqual(n1);
    expect(await standby.openWallet(w1.commitment)).toEqual(w1);
    expect(store.rows.size).toBe(2);
  });

  it('draws every salt at random: the same key and wallet make another commitment in another store', async () => {
    const key = OpeningsKey.generate();
    const [one, two] = [new SealedVault(OpeningsKey.parse(key), memoryStore()), new SealedVault(OpeningsKey.parse(key), memoryStore())];
    const [w1, w2] = [await one.wallet(A, undefined), await two.wallet(A, undefined)];
    expect(w1.commitment).not.toBe(w2.commitment);
    expect(w1.salt).not.toBe(w2.salt);
    const transfers = [{ tx: tx(3), amount: 10n }];
    expect((await one.night('2026-03-03', w1, transfers)).salt).not.toBe((await one.night('2026-03-03', w1, transfers)).salt);
  });

  it('keeps a night\'s commitment for the same transfers, and makes a new one for others', async () => {
    const vault = new SealedVault(newKey(), memoryStore());
    const w = await vault.wallet(A, undefined);
    const transfers = [{ tx: tx(3), amount: 10n }];
    const n = await vault.night('2026-03-03', w, transfers);
    expect(await vault.night('2026-03-03', w, transfers, n.commitment)).toEqual(n);
    expect((await vault.night('2026-03-03', w, [...transfers, { tx: tx(4), amount: 1n }], n.commitment)).commitment).not.toBe(n.commitment);
  });

  it('makes a switch of wallet, and a switch back, a new commitment each time', async () => {
    const vault = new SealedVault(newKey(), memoryStore());
    const seen: string[] = [];
    for (const address of [A, A, B, A]) {
      const w = await vault.wallet(address, seen.at(-1));
      if (w.commitment !== seen.at(-1)) seen.push(w.commitment);
    }
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
    expect((await vault.openWallet(seen[2]!))?.wallet).toBe(A);
  });

  it('seals rows that tell nothing of the wallet, the transactions or the salts', async () => {
    const store = memoryStore();
    const vault = new SealedVault(newKey(), store);
    const w = await vault.wallet(A, undefined);
    const n = await vault.night('2026-03-04', w, [{ tx: tx(0xbeef), amount: 777_777_777n }]);
    const sealed = Buffer.concat([...store.rows.values()].map((r) => r.sealed));
    for (const needle of [A.slice(2), tx(0xbeef).slice(2), '777777777']) expect(sealed.toString('latin1')).not.toContain(needle);
    for (const salt of [w.salt, n.salt]) expect(sealed.includes(Buffer.from(salt, 'base64'))).toBe(false);
    expect([...store.rows.values()].map((r) => r.kind).sort()).toEqual(['night', 'wallet']);
  });

  it('opens nothing under another key, a changed row, or a row moved to another commitment', async () => {
    const store = memoryStore();
    const key = newKey();
    const vault = new SealedVault(key, store);
    const w = await vault.wallet(A, undefined);
    const [n1, n2] = [await vault.night('2026-03-05', w, [{ tx: tx(5), amount: 5n }]), await vault.night('2026-03-06', w, [{ tx: tx(6), amount: 6n }])];

    const other = newKey();
    await expect(new SealedVault(other, store).openNight(n1.commitment)).rejects.toThrow(`is sealed under another OPENINGS_KEY (key id ${key.id}; this one's is ${other.id})`);
    // The writer with another key commits the wallet anew, and says why.
    const why: string[] = [];
    const replaced = await new SealedVault(other, store, (w2) => why.push(w2)).wallet(A, w.commitment);
    expect(replaced.commitment).not.toBe(w.commitment);
    expect(why).toEqual([expect.stringContaining('sealed under another OPENINGS_KEY')]);

    const row1 = store.rows.get(n1.commitment)!;
    const row2 = store.rows.get(n2.commitment)!;
    const flipped = Buffer.from(row1.sealed);
    flipped[20] = flipped[20]! ^ 1;
    store.rows.set(n1.commitment, { ...row1, sealed: flipped });
    await expect(vault.openNight(n1.commitment)).rejects.toThrow(/does not authenticate under this OPENINGS_KEY: it was changed, or moved from another row/);
    // Swapped: each row's sealed bytes under the other's commitment.
    store.rows.set(n1.commitment, { ...row1, sealed: row2.sealed });
    store.rows.set(n2.commitment, { ...row2, sealed: row1.sealed });
    await expect(vault.openNight(n1.commitment)).rejects.toBeInstanceOf(UnopenableOpening);
    await expect(vault.openNight(n2.commitment)).rejects.toBeInstanceOf(UnopenableOpening);
    // A night's row named a wallet's is refused before it is unsealed; so is the kind changed in the row.
    store.rows.set(n1.commitment, row1);
    await expect(vault.openWallet(n1.commitment)).rejects.toThrow(/kept as a night's, not a wallet's/);
    store.rows.set(n1.commitment, { ...row1, kind: 'wallet' });
    await expect(vault.openWallet(n1.commitment)).rejects.toThrow(/does not authenticate/);
    expect(await vault.openNight(`${'A'.repeat(43)}=`)).toBeUndefined();
  });

  it('takes only a key of 32 bytes in base64url', () => {
    expect(() => OpeningsKey.parse('secret')).toThrow('OPENINGS_KEY must be 32 bytes in base64url (43 characters), as `npm run keys` makes it.');
    expect(() => OpeningsKey.parse(Buffer.alloc(31).toString('base64url'))).toThrow(/32 bytes/);
    expect(OpeningsKey.generate()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newKey().id).toMatch(/^[0-9a-f]{16}$/);
  });
});
