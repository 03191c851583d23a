#!/bin/sh
# Run by the nginx image's entrypoint before nginx starts (mounted into /docker-entrypoint.d, after its
# own envsubst of the templates): renders the plain-HTTP listener and the TLS settings
# (tls.conf.template, as stack/nginx-config.ts does for the local stack), then, in the background, has
# nginx load its configuration again (gracefully: `nginx -s reload`) whenever the TLS parts or the
# certificate the acme service writes change, checked once a minute.
set -eu
envsubst '${PUBLIC_SITE_URL} ${PUBLIC_API_URL} ${HTTP_LISTEN} ${ACME_WEBROOT}' < /etc/nginx/tls-templates/tls.conf.template > /etc/nginx/conf.d/tls.conf
state() { cat /etc/nginx/tls/*.conf /etc/letsencrypt/live/*/fullchain.pem 2>/dev/null | md5sum; }
(
  seen=$(state)
  while sleep 60; do
    now=$(state)
    if [ "$now" != "$seen" ]; then
      seen=$now
      nginx -s reload
    fi
  done
) &
