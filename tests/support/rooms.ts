// The rooms of the house: each top-level folder of product code, what it holds, the rooms it may
// import, and the file a newcomer opens first. The layering test holds the imports to it, and the
// docs test holds the contributing page's map and each entry file's opening comment to it.

export interface Room {
  /** What the room holds, as one sentence without its final full stop. */
  holds: string;
  /** The rooms it may import besides itself. */
  imports: string[];
  /** The file a newcomer opens first, from the checkout's root; its opening comment says the room's line. */
  entry: string;
}

/** From the ground floor up: every room imports only rooms listed before it. */
export const ROOMS: Record<string, Room> = {
  contract: { holds: 'the formats every part agrees on: public paths, documents, record schemas, wording, the transparency log\'s and the audit\'s formats', imports: [], entry: 'contract/paths.ts' },
  config: { holds: 'the configuration of every program on the owner\'s machine, from the environment over .env over the embedded defaults', imports: [], entry: 'config/config.ts' },
  'db-client': { holds: 'the connector to Postgres that the writer, the audit tool and the stack share, with libpq\'s multi-host rules and session timeouts', imports: [], entry: 'db-client/pg-connect.ts' },
  'log-reader': { holds: 'a follower\'s reading of the transparency log from the standards alone, on Node\'s own modules: notes, tiles, tree hashes, saved state, the checkpoint archive', imports: [], entry: 'log-reader/tiles.ts' },
  edge: { holds: 'the edge server: every answer of both hosts, the page, the log under /log/, MCP and A2A, signed', imports: ['contract'], entry: 'edge/server.ts' },
  site: { holds: 'the site\'s documents and nginx templates, and the renderer that makes them for a deployment', imports: ['contract'], entry: 'site/render/build.ts' },
  writer: { holds: 'the writer, which holds the account\'s secrets: it fetches the figures, stores them, signs the log and asks the witnesses', imports: ['contract', 'config', 'db-client'], entry: 'writer/cli.ts' },
  witness: { holds: 'a transparency-log witness that other people run', imports: ['contract'], entry: 'witness/cli.ts' },
  verify: { holds: 'the verifier that followers run: a site\'s answers, nights, witnesses and audits against its log', imports: ['log-reader'], entry: 'verify/cli.ts' },
  audit: { holds: 'the audit tool: the owner\'s disclosures and the auditor\'s check of them against the log and the chain', imports: ['contract', 'config', 'db-client', 'log-reader'], entry: 'audit/cli.ts' },
  stack: { holds: 'the machinery that runs the service: Postgres and pg_auto_failover, PostgREST, the edge, nginx, TLS, processes, keys, backups and the systemd unit, with the writer inside `npm start`', imports: ['contract', 'config', 'db-client', 'writer'], entry: 'stack/start.ts' },
  bench: { holds: 'the benchmark: the stack\'s memory, and every path against its static twin side by side', imports: ['contract', 'config', 'stack'], entry: 'bench/run.ts' },
  scripts: { holds: 'build, deployment and documentation helpers, which read every part and which nothing imports', imports: ['contract', 'config', 'db-client', 'edge', 'site', 'writer', 'stack'], entry: 'scripts/build-runtime.ts' },
};

/** The folders under tests/ beside the rooms': the database's (sql/, declared in SQL), shared helpers, fixtures, and the Go reference checkers. */
export const TEST_FOLDERS_BESIDE_ROOMS = ['sql', 'support', 'fixtures', 'go'];

const list = (rooms: string[]): string => rooms.map((r) => `${r}/`).join(', ');

/** The room's line, as the contributing page and the entry file's opening comment say it. */
export function roomLine(name: string): string {
  const room = ROOMS[name]!;
  return `${name}/: ${room.holds}. It imports ${room.imports.length ? list(room.imports) : 'nothing of the project\'s'}.`;
}

/** The map of the rooms that opens the contributing page: a table, one row a room. */
export function roomsTable(): string {
  const rows = Object.entries(ROOMS).map(([name, room]) => `| \`${name}/\` | ${room.holds} | ${room.imports.length ? room.imports.map((r) => `\`${r}/\``).join(', ') : 'nothing'} | \`${room.entry}\` |`);
  return ['| room | what it holds | it may import | open first |', '|---|---|---|---|', ...rows].join('\n');
}
