#!/bin/sh
# Runs before `npm start` and `npm test`: installs what a fresh checkout lacks.
set -e
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm dependencies (npm ci) …"
  npm ci --no-audit --no-fund
fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "nginx is missing: installing Debian's nginx package …"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
  else
    echo "nginx is not installed: install it (Debian/Ubuntu: sudo apt-get install -y nginx) and run the command again." >&2
    exit 1
  fi
fi
