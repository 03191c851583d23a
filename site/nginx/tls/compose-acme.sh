#!/bin/sh
# docker-compose's ACME client (the acme service, certbot's own image): obtains one certificate for
# the hosts of SITE_URL and API_URL by HTTP-01 through the gateway's webroot, renews it when certbot
# deems it due (checked twice a day, without certbot's random sleep), and writes the gateway's TLS
# parts beside it (site/nginx/tls/serving, the local stack's templates); the gateway reloads nginx when
# they change (compose-reload.sh). While the ACME server cannot be reached it says why and tries again
# after a pause that doubles, up to an hour; it never exits. With http:// URLs it does nothing.
set -u
host_of() { printf '%s' "$1" | sed -E 's#^https://([^/:]+).*$#\1#'; }
case "$SITE_URL $API_URL" in
  https://*" https://"*) ;;
  *) echo "acme: SITE_URL and API_URL are not both https://: no certificate to obtain."; exec sleep infinity ;;
esac
site=$(host_of "$SITE_URL")
api=$(host_of "$API_URL")
name=public-stats
live=/etc/letsencrypt/live/$name
parts=/etc/nginx-tls
if [ -n "${ACME_EMAIL:-}" ]; then contact="--email $ACME_EMAIL --no-eff-email"; else contact=--register-unsafely-without-email; fi

# The gateway's TLS parts for the certificate: the same templates the local stack renders.
write_parts() {
  listen="    listen 443 ssl http2;"
  render() { sed -e "s#\${HTTPS_LISTEN_DEFAULT}#    listen 443 ssl http2 default_server;#" -e "s#\${HTTPS_LISTEN}#$listen#" \
    -e "s#\${HOST_NAME}#$1#" -e "s#\${CERT_FILE}#$live/fullchain.pem#" -e "s#\${KEY_FILE}#$live/privkey.pem#" "/templates/$2.conf.template"; }
  render "$site" host > "$parts/site-server.conf.new"
  render "$api" host > "$parts/api-server.conf.new"
  render '' https > "$parts/https.conf.new"
  render '' hsts > "$parts/hsts.conf.new"
  for part in site-server api-server https hsts; do mv "$parts/$part.conf.new" "$parts/$part.conf"; done
}

delay=15
while :; do
  if [ -e "$live/fullchain.pem" ]; then
    certbot renew --non-interactive --no-random-sleep-on-renew
  else
    certbot certonly --non-interactive --webroot --webroot-path /var/www/acme --cert-name "$name" -d "$site" -d "$api" \
      --server "$ACME_DIRECTORY_URL" --agree-tos $contact
  fi
  if [ $? -eq 0 ] && [ -e "$live/fullchain.pem" ]; then
    write_parts
    delay=15
    sleep 43200
  else
    echo "acme: could not obtain or renew the certificate from $ACME_DIRECTORY_URL (certbot's output above); trying again in $delay s."
    sleep "$delay"
    delay=$((delay * 2 > 3600 ? 3600 : delay * 2))
  fi
done
