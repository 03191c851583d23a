-- Markets the account quoted, for the rolling 24-hour breadth. Only a keyed digest of each market
-- (an HMAC under a secret that only the writer holds) and when it was last quoted are kept, so no
-- row names a market, and nobody without the writer's secret can tell which market a row stands for.
create table stats.quoted_market (
  digest bytea primary key check (octet_length(digest) = 32),
  last_seen_at timestamptz not null
);
create index quoted_market_last_seen_idx on stats.quoted_market (last_seen_at);
alter table stats.quoted_market owner to stats_owner;
-- DELETE only here: digests older than the window are dropped; the figure tables stay delete-free.
grant select, insert, update, delete on stats.quoted_market to stats_writer;
