#!/bin/sh
# The primary's first start (docker-entrypoint-initdb.d): the replica may stream from it, HAProxy's
# check may log in as haproxy_check without a password (deploy/haproxy.cfg; compose's private
# network only), and commits wait for the replica (synchronous replication: a write the instances
# were told is committed survives the loss of this node).
set -e
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
create role haproxy_check login;
alter system set synchronous_standby_names = '*';
SQL
# First match wins: these go before the image's catch-all password line.
hba="$PGDATA/pg_hba.conf"
{
  printf 'host postgres haproxy_check all trust\nhost replication %s all scram-sha-256\n' "$POSTGRES_USER"
  cat "$hba"
} > "$hba.new"
mv "$hba.new" "$hba"
