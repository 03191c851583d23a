#!/bin/sh
# `sh scripts/ensure-deps.sh [--test] [-- COMMAND [ARG…]]`: installs what a fresh checkout lacks, then
# runs COMMAND in its place (npm test and npm run service; npm start runs it from stack/start.sh).
# A COMMAND asked for its --help runs at once and nothing is installed, since help changes nothing.
# This is no pre- hook because npm hands a script's arguments to the script alone, never to its hooks.
set -e
with_tests=
if [ "${1:-}" = --test ]; then with_tests=1; shift; fi
then_run=
if [ "${1:-}" = -- ]; then
  shift
  then_run=1
  for arg; do
    if [ "$arg" = --help ]; then exec "$@"; fi
  done
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm dependencies (npm ci) …" >&2
  npm ci --no-audit --no-fund >&2
fi
# With --test (npm test): openapi-typescript with the TypeScript 5 it needs, apart from the project's
# TypeScript 7.
tool=scripts/openapi-typescript
if [ -n "$with_tests" ] && { [ ! -d $tool/node_modules ] || [ $tool/package-lock.json -nt $tool/node_modules/.package-lock.json ]; }; then
  npm ci --prefix $tool --no-audit --no-fund >/dev/null
fi
# nginx; brotli's modules are installed beside it when we can (nginx sends gzip only without them).
missing=""
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then missing="nginx"; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ ! -e /usr/lib/nginx/modules/ngx_http_brotli_filter_module.so ]; then
  missing="$missing libnginx-mod-http-brotli-filter libnginx-mod-http-brotli-static"
fi
# With --test: Go and its x/mod packages (Debian's golang-go, golang-golang-x-mod-dev), whose reference
# sumdb/note and sumdb/tlog check the transparency log.
if [ -n "$with_tests" ] && { ! command -v go >/dev/null 2>&1 || [ ! -d /usr/share/gocode/src/golang.org/x/mod/sumdb/tlog ]; }; then
  missing="$missing golang-go golang-golang-x-mod-dev"
fi
# With --test: pg_basebackup and pg_dump of the server's major (Debian's postgresql-client-15), which make
# the read replica and the backups the tests check.
if [ -n "$with_tests" ] && [ ! -x /usr/lib/postgresql/15/bin/pg_basebackup ] && [ -z "${PG_BIN_DIR:-}" ]; then
  missing="$missing postgresql-client-15"
fi
# With --test, or when .env turns the high-availability mode on: Debian's postgresql-15 with
# pg_auto_failover (postgresql-15-auto-failover, pg-auto-failover-cli).
if { [ -n "$with_tests" ] || grep -qs '^POSTGRES_HA=pg_auto_failover' "${ENV_FILE:-.env}"; } && { ! command -v pg_autoctl >/dev/null 2>&1 || [ ! -x /usr/lib/postgresql/15/bin/postgres ]; }; then
  missing="$missing postgresql-15 postgresql-15-auto-failover pg-auto-failover-cli"
fi
# With --test: certbot, pebble (Let's Encrypt's test ACME server, with pebble-challtestsrv) and sslscan,
# which the HTTPS tests run; systemd's systemd-analyze, which checks the service unit, and
# systemd-nspawn (systemd-container), which boots this machine's systemd to start it. When .env asks for
# HTTPS without a certificate of its own: certbot, which obtains one.
if [ -n "$with_tests" ] && { ! command -v certbot >/dev/null 2>&1 || ! command -v pebble >/dev/null 2>&1 || ! command -v sslscan >/dev/null 2>&1 || ! command -v systemd-analyze >/dev/null 2>&1 || ! command -v systemd-nspawn >/dev/null 2>&1; }; then
  missing="$missing certbot pebble sslscan systemd systemd-container"
elif grep -qs '^SITE_URL=https://' "${ENV_FILE:-.env}" && ! grep -qs '^TLS_CERT_FILE=.' "${ENV_FILE:-.env}" && ! command -v certbot >/dev/null 2>&1; then
  missing="$missing certbot"
fi
# With --test: Debian's iproute2 and nftables, with which the partition tests make their network
# namespaces and bridges, take links down and drop or reject packets (nsenter, from util-linux, runs
# a process inside a namespace).
if [ -n "$with_tests" ] && { [ ! -x /usr/sbin/ip ] || [ ! -x /usr/sbin/nft ]; }; then
  missing="$missing iproute2 nftables"
fi
# With --test: Debian's faketime (libfaketime), which moves one writer's clock in the nemesis test.
if [ -n "$with_tests" ] && [ ! -e /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ]; then
  missing="$missing faketime"
fi
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian packages:$missing …" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "Missing:$missing. Install it (Debian/Ubuntu: sudo apt-get install -y$missing) and run the command again." >&2
    exit 1
  fi
fi
if [ -n "$then_run" ]; then exec "$@"; fi
