// The openings a disclosure opens: read from the database every writer shares and unsealed with
// OPENINGS_KEY (contract/audit/transfer-vault.ts), so `disclose` works from any writer's machine, and
// after a failover or a restore, whichever writer committed the nights.
import { OpeningsKey, SealedVault, type OpeningStore, type SealedOpening, type TransferVault } from '../contract/audit/transfer-vault.ts';
import { connectDatabase, SERVER_TIMEOUTS } from '../db-client/pg-connect.ts';

/** The database's openings, read once (one query, one connection); the audit tool only reads them. */
function databaseStore(databaseUrl: string): OpeningStore {
  let rows: Promise<Map<string, SealedOpening>> | undefined;
  const load = async () => {
    const client = await connectDatabase(databaseUrl, { applicationName: 'stats-audit', timeouts: SERVER_TIMEOUTS });
    try {
      const { rows: found } = await client.query<SealedOpening>('select commitment, kind, key_id, sealed from stats.transfer_opening');
      return new Map(found.map((r) => [r.commitment, r]));
    } finally {
      await client.end();
    }
  };
  return {
    async find(commitment) {
      rows ??= load();
      return (await rows).get(commitment);
    },
    async add() {
      throw new Error('the audit tool never writes an opening: only a writer commits.');
    },
  };
}

/** The vault `disclose` opens real nights from, with the owner's OPENINGS_KEY; refuses with a sentence without it. */
export function databaseVault(databaseUrl: string, openingsKey: string | undefined): TransferVault {
  if (!openingsKey) {
    throw new Error('OPENINGS_KEY is not set: the openings of the nights\' commitments are sealed under it in the database, so nothing can be disclosed without it. Set the key the writers use (it is in the first writer\'s .env).');
  }
  return new SealedVault(OpeningsKey.parse(openingsKey), databaseStore(databaseUrl));
}
