#!/bin/sh
# `npm start`: installs what a fresh checkout lacks, bundles the long-running programs afresh into .build/
# (stack/runtime-build.ts says why), then runs the bundle of stack/start.ts in this process's place.
# The help lives here, in the shell, so that `npm start -- --help` answers on a checkout with neither its
# dependencies nor its bundles, and installs, bundles and starts nothing.
set -e
cd "$(dirname "$0")/.."
usage='Usage: npm start [-- --help]
Runs the whole service on this machine in the foreground: Postgres (embedded, under DATA_DIR, unless
DATABASE_URL names one), PostgREST, the edge server, nginx (API host and site host) and the writer.
Ctrl-C or SIGTERM stops every part. On its first start it writes the missing secrets into .env
(ENV_FILE names another file). With NODE_DATABASE_URL it runs one more node (PostgREST, edge, nginx)
of a service whose database and writer run elsewhere. Before it starts it installs what the checkout
lacks (npm ci, nginx) and bundles the long-running programs into .build/.
  --help   print this help and do nothing else'
for arg; do
  if [ "$arg" = --help ]; then printf '%s\n' "$usage"; exit 0; fi
done
if [ $# -gt 0 ]; then
  printf 'npm start takes no arguments, not "%s".\n\n%s\n' "$1" "$usage" >&2
  exit 2
fi
sh scripts/ensure-deps.sh
node scripts/build-runtime.ts
exec node .build/start/start.mjs
