#!/usr/bin/env bash
# Starts the machine's PostgreSQL cluster (Debian's package, installed on
# these machines; installed here when missing), creates the test role and
# database, and prints the URL tests read from ADAPTRAG_TEST_POSTGRES:
#
#   export ADAPTRAG_TEST_POSTGRES=$(scripts/postgres.sh)
#
# Idempotent: a running cluster and an existing role or database are kept.
set -euo pipefail
db=${ADAPTRAG_PG_DB:-adaptrag_test}
user=${ADAPTRAG_PG_USER:-adaptrag}
pass=${ADAPTRAG_PG_PASSWORD:-adaptrag}

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  echo "installing postgresql" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) >&2
fi
read -r ver cluster port status _ < <(pg_lsclusters --no-header | head -n 1)
if [ "$status" != online ]; then
  pg_ctlcluster --skip-systemctl-redirect "$ver" "$cluster" start >&2
fi
for _ in $(seq 50); do
  su postgres -c "psql -p $port -Atqc 'select 1'" >/dev/null 2>&1 && break
  sleep 0.2
done
psql_() { su postgres -c "psql -p $port -v ON_ERROR_STOP=1 -Atqc \"$1\""; }
[ "$(psql_ "select 1 from pg_roles where rolname='$user'")" = 1 ] ||
  psql_ "create role $user login password '$pass'" >&2
[ "$(psql_ "select 1 from pg_database where datname='$db'")" = 1 ] ||
  psql_ "create database $db owner $user" >&2
echo "postgres://$user:$pass@127.0.0.1:$port/$db?sslmode=disable"
