// db-client/: the connector to Postgres that the writer, the audit tool and the stack share, with
// libpq's multi-host rules and session timeouts. It imports nothing of the project's.
//
// Every connection the writer and the admin tools (migrations, login passwords, restores) make starts
// here. node-postgres takes one host per connection string, while a database URL may name several, as
// libpq allows (https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-MULTIPLE-HOSTS), so that
// they find the primary of a failover pair wherever it is. This module does what libpq does with such a
// URL: it tries each host in order and, under target_session_attrs
// (https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNECT-TARGET-SESSION-ATTRS), keeps
// the first session that qualifies. A URL naming one host (and no target_session_attrs) is handed to
// node-postgres exactly as given.
import { Socket } from 'node:net';
import pg from 'pg';

/** The libpq values a writer can use: the others (read-only, standby, prefer-standby) pick a server it cannot write on. */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';
/** What a client that only reads may also ask for (a node reading the log record at its start, over PostgREST's URL). */
export type ReadingTargetSessionAttrs = TargetSessionAttrs | 'read-only' | 'standby' | 'prefer-standby';

const TARGETS: readonly TargetSessionAttrs[] = ['any', 'read-write', 'primary'];
const READ_ONLY_TARGETS: readonly ReadingTargetSessionAttrs[] = ['read-only', 'standby', 'prefer-standby'];

/** One server to try: where it is (for messages) and the single-host URL node-postgres is given for it. */
export interface Candidate {
  /** host:port as the URL gave them ([v6]:port for IPv6; the port is "default" when none was given). */
  label: string;
  url: string;
}

export interface DatabaseTarget<T extends ReadingTargetSessionAttrs = TargetSessionAttrs> {
  candidates: Candidate[];
  targetSessionAttrs: T;
}

/** The per-session settings that keep a statement or a session from hanging on forever; 0 leaves the server's own value. */
export interface SessionTimeouts {
  statementMs: number;
  idleInTransactionMs: number;
  idleSessionMs: number;
}

const URL_PATTERN = /^(postgres(?:ql)?:\/\/)([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/;

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new Error(`the database URL: ${what} "${text}" is not valid percent-encoding.`);
  }
}

/** host[:port] or [v6][:port], as one element of a URL's comma-separated host list. */
function splitHostPort(spec: string): { host: string; port: string } {
  if (spec.startsWith('[')) {
    const end = spec.indexOf(']');
    if (end < 0) throw new Error(`the database URL: the IPv6 address in "${spec}" has no closing bracket.`);
    const rest = spec.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) throw new Error(`the database URL: unexpected "${rest}" after the IPv6 address in "${spec}".`);
    return { host: spec.slice(1, end), port: rest.slice(1) };
  }
  const colon = spec.indexOf(':');
  return colon < 0 ? { host: decode(spec, 'host'), port: '' } : { host: decode(spec.slice(0, colon), 'host'), port: spec.slice(colon + 1) };
}

/**
 * The servers a connection URL names, in order, and the kind of session it asks for. Hosts come from
 * the URL's host list or its `host` parameter, ports from each host's own or the `port` parameter:
 * one port serves every host, or there is one per host; a host without one gets the default (5432,
 * or PGPORT, as node-postgres has it). Other parameters are kept for every server.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget;
/** With `reading`, the targets of a client that only reads are taken too (read-only, standby, prefer-standby). */
export function parseDatabaseUrl(url: string, options: { reading: true }): DatabaseTarget<ReadingTargetSessionAttrs>;
export function parseDatabaseUrl(url: string, { reading = false }: { reading?: boolean } = {}): DatabaseTarget<ReadingTargetSessionAttrs> {
  const match = URL_PATTERN.exec(url);
  // A key=value string or a socket path: node-postgres reads those itself, one server.
  if (!match) return { candidates: [{ label: 'the configured server', url }], targetSessionAttrs: 'any' };
  const [, scheme, authority, path, query = '', fragment = ''] = match as unknown as [string, string, string, string, string | undefined, string | undefined];
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at + 1);
  const hostList = at < 0 ? authority : authority.slice(at + 1);

  // The query's own parameters, kept as written (no re-encoding) except the ones resolved here.
  const params = query.slice(1).split('&').filter((p) => p !== '');
  const take = (name: string): string | undefined => {
    const found = params.filter((p) => decode(p.split('=')[0]!, 'parameter') === name);
    if (found.length === 0) return undefined;
    for (const p of found) params.splice(params.indexOf(p), 1);
    const last = found.at(-1)!;
    return decode(last.slice(last.indexOf('=') + 1 || last.length).replace(/\+/g, ' '), name);
  };
  const hostParam = take('host');
  const portParam = take('port');
  const targetParam = take('target_session_attrs');

  const targetSessionAttrs = (targetParam ?? 'any') as ReadingTargetSessionAttrs;
  if (!TARGETS.includes(targetSessionAttrs as TargetSessionAttrs) && !(reading && READ_ONLY_TARGETS.includes(targetSessionAttrs))) {
    const why = READ_ONLY_TARGETS.includes(targetParam as ReadingTargetSessionAttrs) ? 'it asks for a server the writer cannot write on' : 'it is not a value libpq knows';
    throw new Error(`the database URL: target_session_attrs=${targetParam} is not supported (${why}); use read-write (or primary) to find the primary among several hosts, or any.`);
  }

  let hosts: { host: string; port: string }[];
  if (hostParam !== undefined) hosts = hostParam.split(',').map((host) => ({ host, port: '' }));
  else hosts = hostList.split(',').map(splitHostPort);
  if (portParam !== undefined) {
    const ports = portParam.split(',');
    if (ports.length !== 1 && ports.length !== hosts.length) {
      throw new Error(`the database URL: ${ports.length} ports for ${hosts.length} hosts; give one port for all, or one per host.`);
    }
    hosts = hosts.map((h, i) => ({ host: h.host, port: ports.length === 1 ? ports[0]! : ports[i]! }));
  }
  for (const { port } of hosts) {
    if (port !== '' && !/^\d{1,5}$/.test(port)) throw new Error(`the database URL: "${port}" is not a port number.`);
  }

  // One server, nothing to choose: node-postgres gets the URL exactly as it was given.
  if (hosts.length === 1 && targetParam === undefined) {
    const { host, port } = hosts[0]!;
    return { candidates: [{ label: labelOf(host, port), url }], targetSessionAttrs };
  }
  const candidates = hosts.map(({ host, port }) => {
    if (host === '') throw new Error('the database URL: an empty host in a list of hosts.');
    // Given as parameters, which node-postgres prefers to the URL's host and port, so a socket
    // directory and an IPv6 address need no other spelling.
    const own = [`host=${encodeURIComponent(host)}`, ...(port === '' ? [] : [`port=${port}`])];
    return { label: labelOf(host, port), url: `${scheme}${userinfo}${path || '/'}?${[...params, ...own].join('&')}${fragment}` };
  });
  return { candidates, targetSessionAttrs };
}

/**
 * The URL without its password, and the password, so a client program (pg_dump, psql) is given it in
 * PGPASSWORD, never on its command line where `ps` shows it. libpq reads the URL's host list itself.
 */
export function withoutPassword(url: string): { url: string; password: string | undefined } {
  const match = URL_PATTERN.exec(url);
  if (!match) return { url, password: undefined };
  const [, scheme, authority, path, query = '', fragment = ''] = match as unknown as [string, string, string, string, string | undefined, string | undefined];
  const at = authority.lastIndexOf('@');
  const colon = authority.indexOf(':');
  if (at < 0 || colon < 0 || colon > at) return { url, password: undefined };
  return { url: `${scheme}${authority.slice(0, colon)}${authority.slice(at)}${path}${query}${fragment}`, password: decode(authority.slice(colon + 1, at), 'password') };
}

function labelOf(host: string, port: string): string {
  return `${host.includes(':') ? `[${host}]` : host || 'localhost'}:${port || 'default'}`;
}

/** The server's own timeouts: an admin session (a migration, a restore) may run long. */
export const SERVER_TIMEOUTS: SessionTimeouts = { statementMs: 0, idleInTransactionMs: 0, idleSessionMs: 0 };

export interface ConnectOptions {
  applicationName: string;
  timeouts: SessionTimeouts;
  /** How long one server may take to accept a connection before the next is tried. */
  connectTimeoutMs?: number;
  /** The client only reads: the URL may ask for a standby (target_session_attrs read-only, standby, prefer-standby), as PostgREST's does. */
  reading?: boolean;
  /**
   * A server that sends nothing for this long is taken as gone and the connection dropped (the query
   * then fails with SilentServer). Without it, a command whose server is cut off without a word waits
   * as long as TCP retransmits, many minutes. Unset for sessions that may idle by design.
   */
  silenceMs?: number;
}

/** The server sent nothing for ConnectOptions.silenceMs: what it did with the last statement is unknown. */
export class SilentServer extends Error {}

/**
 * node-postgres's `stream` option (https://node-postgres.com/apis/client): the socket it connects,
 * with an idle timeout (https://nodejs.org/api/net.html#socketsettimeouttimeout-callback) that a
 * byte either way resets.
 */
function silenceLimitedStream(opts: ConnectOptions): { stream?: () => Socket } {
  const ms = opts.silenceMs;
  if (!ms) return {};
  return {
    stream: () => {
      const socket = new Socket();
      socket.setTimeout(ms, () => socket.destroy(new SilentServer(`the database server sent nothing for ${ms / 1000} s (cut off, or its disk or network stalled)`)));
      return socket;
    },
  };
}

/** Why a session does not qualify under `target`, or undefined when it does (libpq's checks). */
async function disqualified(client: pg.Client, target: ReadingTargetSessionAttrs): Promise<string | undefined> {
  if (target === 'any') return undefined;
  // read-write: libpq accepts a session whose transaction_read_only is off (on a standby it is
  // always on, as it is with default_transaction_read_only = on); primary: one not in recovery.
  const { rows } = await client.query<{ read_only: string; recovery: boolean }>(
    "select current_setting('transaction_read_only') as read_only, pg_is_in_recovery() as recovery");
  const row = rows[0]!;
  if (target === 'read-write' && row.read_only !== 'off') return row.recovery ? 'it is a standby (in recovery)' : 'its sessions are read-only (default_transaction_read_only is on)';
  if (target === 'primary' && row.recovery) return 'it is a standby (in recovery)';
  if (target === 'read-only' && row.read_only !== 'on') return 'it takes writes';
  if ((target === 'standby' || target === 'prefer-standby') && !row.recovery) return 'it is not a standby (not in recovery)';
  return undefined;
}

/**
 * The SETs that give a session its timeouts and keepalives. Set after connecting, not as startup
 * options, because poolers in session mode pass SET through but refuse unknown startup parameters.
 */
function sessionSettings(t: SessionTimeouts): string {
  const set = [
    `set statement_timeout = ${t.statementMs}`,
    `set idle_in_transaction_session_timeout = ${t.idleInTransactionMs}`,
    ...(t.idleSessionMs > 0 ? [`set idle_session_timeout = ${t.idleSessionMs}`] : []),
    // The server's side of a vanished client (no FIN ever comes): its session ends within about 25 s
    // rather than the operating system's two hours. Ignored on Unix sockets.
    // https://www.postgresql.org/docs/15/runtime-config-connection.html#GUC-TCP-KEEPALIVES-IDLE
    'set tcp_keepalives_idle = 10', 'set tcp_keepalives_interval = 5', 'set tcp_keepalives_count = 3', 'set tcp_user_timeout = 25000',
  ];
  return set.join('; ');
}

async function openOne(candidate: Candidate, target: ReadingTargetSessionAttrs, opts: ConnectOptions): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: candidate.url,
    application_name: opts.applicationName,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    // This side notices a dead server too, instead of waiting on a silent socket.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...silenceLimitedStream(opts),
  });
  // Until its user listens, an error on an idle client only means "connect again", which callers do.
  client.on('error', () => {});
  try {
    await client.connect();
    const why = await disqualified(client, target);
    if (why) throw new Error(why);
    await client.query(sessionSettings(opts.timeouts));
    return client;
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
}

/** The first server of `url` that qualifies, and a session on it; every server failing is one error naming each and why (never the password). */
async function firstQualifying(url: string, opts: ConnectOptions): Promise<{ candidate: Candidate; client: pg.Client }> {
  const { candidates, targetSessionAttrs } = opts.reading ? parseDatabaseUrl(url, { reading: true }) : parseDatabaseUrl(url);
  if (candidates.length === 1 && targetSessionAttrs === 'any') return { candidate: candidates[0]!, client: await openOne(candidates[0]!, 'any', opts) };
  const failures: string[] = [];
  // prefer-standby: a standby if any server is one, else any server (libpq's second pass).
  for (const target of targetSessionAttrs === 'prefer-standby' ? ['prefer-standby', 'any'] as const : [targetSessionAttrs]) {
    for (const candidate of candidates) {
      try {
        return { candidate, client: await openOne(candidate, target, opts) };
      } catch (error) {
        failures.push(`${candidate.label}: ${(error as Error).message}`);
      }
    }
  }
  throw new Error(`no server of the database URL gave a ${targetSessionAttrs === 'any' ? '' : `${targetSessionAttrs} `}session (${failures.join('; ')})`);
}

/** A connected session on the first server of `url` that qualifies, with the timeouts set. */
export async function connectDatabase(url: string, opts: ConnectOptions): Promise<pg.Client> {
  return (await firstQualifying(url, opts)).client;
}

/** connectDatabase, and which server of the URL the session is on (host:port, as Candidate.label). */
export async function connectDatabaseAt(url: string, opts: ConnectOptions): Promise<{ client: pg.Client; server: string }> {
  const { candidate, client } = await firstQualifying(url, opts);
  return { client, server: candidate.label };
}

/**
 * A node-postgres pool on the first server of `url` that qualifies (chosen once, as a command's
 * connections all belong on one server), each of its sessions with the timeouts set.
 */
export async function poolOnServer(url: string, opts: ConnectOptions & { max: number }): Promise<pg.Pool> {
  const { candidate, client } = await firstQualifying(url, opts);
  await client.end().catch(() => {});
  const pool = new pg.Pool({
    connectionString: candidate.url,
    max: opts.max,
    application_name: opts.applicationName,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...silenceLimitedStream(opts),
  });
  pool.on('connect', (session) => {
    // A connection lost while a caller holds the session is an 'error' event too, which would end
    // the process unhandled; the caller's own query fails with the same error.
    session.on('error', () => {});
    // Queued ahead of whatever its first user sends (https://node-postgres.com/apis/pool#events).
    void session.query(sessionSettings(opts.timeouts)).catch(() => {});
  });
  // An idle connection the server drops (restart, shutdown) is an 'error' event on the pool, which
  // would crash the process unhandled. The pool discards that client and the next query reconnects.
  pool.on('error', () => {});
  return pool;
}
