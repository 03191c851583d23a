// The writer's command-line help, one text per command (`npm run writer -- <command> --help`).
import { CHECK_NIGHTS } from './check.ts';
import { WRITER_DEFAULTS } from '../config/writer.ts';
import { EVENT_TYPES, eventFormat, MAX_USD, type EventType } from './events.ts';
import { EXIT_ONE_NODE, ONE_NODE } from './replication.ts';

/** What the help says after an event's format, one line each. */
const EVENT_NOTES: Partial<Record<EventType, string[]>> = {
  trading_cost: ['(signed: a gain is a negative cost; dated like', " the payout: a day's cost carries the next date)"],
};

/** The import format, one event type a line, made from the parser's own table. */
const EVENT_LINES = EVENT_TYPES.map((type) => {
  const format = `  ${eventFormat(type)}`;
  const [first, ...more] = EVENT_NOTES[type] ?? [];
  if (first === undefined) return format;
  return [`${format}     ${first}`, ...more.map((line) => `${' '.repeat(format.length + 5)}${line}`)].join('\n');
}).join('\n');

export const HELP: Record<string, string> = {
  '': `Usage: npm run writer -- <command> [options]

Commands:
  run                         the long-running loop (heartbeat every minute, figures every WRITER_INTERVAL_MINUTES);
                              a standby while another writer holds the writer lock
  once                        one cycle; exit code 0 when every figure was written, 1 otherwise
  import <file|->             NDJSON events from a file or stdin, in one transaction
  backfill --since YYYY-MM-DD settled nights from a date, one request per night (polymarket source)
  status                      what the database holds and when each kind was last written
  check                       read-only dry run against the Polymarket account: what would be published
  seed-demo                   the demo history, into a database that holds no data at all
  sign                        sign the transparency log's new entries and ask its witnesses to cosign

The source is WRITER_SOURCE (demo | polymarket | none); without it, polymarket when CLOB_API_KEY is set,
else demo. One writer writes at a time: run, once and backfill take the writer lock (a Postgres advisory
lock) first. Run \`npm run writer -- <command> --help\` for details.

On a database that fails over by itself (a pg_auto_failover node), a write counts as done, and the log
is signed and sent to witnesses, only once a standby that can take over holds it. While none does, what
is written is stored on the primary alone: the writer says "${ONE_NODE}",
signs nothing new, and import, once and sign exit ${EXIT_ONE_NODE}.`,
  run: `Usage: npm run writer -- run

Runs until Ctrl-C / SIGTERM. It first takes the writer lock; while another writer holds it, this one
waits as a standby (saying so at once, then every WRITER_STANDBY_LOG_SECONDS) and takes over within
seconds of the other's end. Holding it: a heartbeat every WRITER_HEARTBEAT_SECONDS (default ${WRITER_DEFAULTS.WRITER_HEARTBEAT_SECONDS}), named
WRITER_NAME (or a random name drawn at start); accrual, breadth and capital every
WRITER_INTERVAL_MINUTES (default ${WRITER_DEFAULTS.WRITER_INTERVAL_MINUTES}); the last two settled nights and the last settled day's trading
cost on every cycle. A failing source call is logged and retried next cycle; it never stops the loop.
A writer whose lock's connection ends writes nothing more and waits as a standby again.
The lock is a lease: Postgres ends the session of a writer that stops (idle_session_timeout), so a
standby takes over well within 30 s; a writer whose step (heartbeat or cycle) runs longer than
WRITER_STALL_SECONDS (default ${WRITER_DEFAULTS.WRITER_STALL_SECONDS}) gives the lock up. WRITER_DATABASE_URL may list several hosts, as
libpq does (postgres://user:pw@host1:5432,host2:5432/db?target_session_attrs=read-write): the writer
takes the first that qualifies, and never takes the lock on a standby (a server in recovery).
With the demo source it first loads the demo history into an empty database, and it stops (saying so)
once the database holds real data.`,
  once: `Usage: npm run writer -- once

One heartbeat and one cycle, then exit: 0 when every figure was written, 1 when any failed, ${EXIT_ONE_NODE} when
none failed but some are ${ONE_NODE}. While another writer holds the writer lock it
writes nothing and exits 1, naming that writer.`,
  import: `Usage: npm run writer -- import <file|->

Reads one JSON event per line (blank lines are skipped):
${EVENT_LINES}
Dates and timestamps lie between 1 January of IMPORT_EARLIEST_YEAR (default ${WRITER_DEFAULTS.IMPORT_EARLIEST_YEAR}) and now; amounts
within ±${MAX_USD.toExponential()} USD; numbers with no more digits than a double keeps exactly (about 15 significant).
The whole input is one transaction: one bad line writes nothing and the error names the line and why.
It does not take the writer lock, so it works beside a running writer: like each of the writer's own
transactions, it locks the settings row first, so the two take turns.
Re-importing the same data changes nothing; a changed payout is a correction (the old value is audited).
The first import removes the demo data.
Exit code 0 when the import is written (on a database that fails over by itself: held by a standby that
can take over too), 1 when nothing was written or the log's work after the commit failed (it says which),
${EXIT_ONE_NODE} when it is ${ONE_NODE}: stored on the primary alone, neither signed
nor acknowledged, and lost should that node be lost before a standby copies it; import it again once
health is "ok".`,
  backfill: `Usage: npm run writer -- backfill --since YYYY-MM-DD

Fetches every settled night from that payout date to today from Polymarket, one request per night.
Nights already recorded are skipped (so it resumes after an interruption), except the last two,
which are asked again because Polymarket may revise them. Needs the polymarket source. While another
writer holds the writer lock it writes nothing and exits 1, naming that writer: stop the running writer
(and its standby) first.`,
  check: `Usage: npm run writer -- check

Reads the configured Polymarket account and prints what the writer would publish, writing nothing:
the last ${CHECK_NIGHTS} nightly payouts beside the REWARD credits of each night, today's accrual and
its markets, the markets quoted in 24 h, capital, and yesterday's cash flows by kind. It flags what
looks implausible: no paid earnings for nights on end, zero cash with positions held, a night whose
earnings and REWARD credits differ, activity whose effect on cash it cannot tell (a type it does not
know, a tip without a direction), reward reads that fail. For a deposit wallet (SIGNATURE_TYPE=3),
which the rewards routes' reference does not list, it says so, and whether those routes answered.
While no real checkpoint has fixed the transparency log's name and SITE_URL is a loopback or IP
address with no LOG_ORIGIN, it says which name the first checkpoint will fix and how to choose
another; a LOG_ORIGIN naming another origin than the fixed one is flagged.
Figures only: no address or id.
Exit code 0 when nothing is flagged, 1 otherwise. Run it before the first real write.`,
  'seed-demo': `Usage: npm run writer -- seed-demo

Loads the demo history (its nights with their trading costs and capital, today's accruals so far,
breadth and a heartbeat; data_source "demo") into a database that holds no data at all, as \`run\`
does first with the demo source, and says whether it did; a database with any data is left as it is.
Exit code 0 either way. The local stack runs it before it starts when the writer's source is demo.`,
  sign: `Usage: npm run writer -- sign

Appends the nights that have turned final to the transparency log, signs a checkpoint of the new tree
with the log's own key (LOG_SIGNING_KEY) and, with a witness policy (LOG_POLICY), asks each witness of
it to cosign, once. Every write does the same on its own; this is for an operator, or after a restore.
Before signing it checks the new tree extends the last checkpoint stored and the last this signer
signed (LOG_SIGNER_STATE): otherwise the log halts (health says why) and nothing is appended.
A real checkpoint names the origin the log's first real checkpoint fixed, whatever SITE_URL is now;
a LOG_ORIGIN naming another is refused.
Exit code 0 when the log is signed, 1 when it is halted or LOG_SIGNING_KEY is missing, ${EXIT_ONE_NODE} when its
new entries are ${ONE_NODE} (nothing is signed until a standby holds them).`,
  status: `Usage: npm run writer -- status

Prints the data source, the writer holding the writer lock (null when none), row counts (and demo rows),
the latest date or observation of each kind, when it was last written, the number of payout corrections,
and the transparency log: its entries, how many the latest checkpoint signs, and, on a database that fails
over by itself while no standby that can take over streams, "${ONE_NODE}".`,
};
