#!/usr/bin/env bash
# The official postgres image's entrypoint interface (see Containerfile), in short: first start on an empty PGDATA
# runs initdb, creates POSTGRES_USER's database and runs /docker-entrypoint-initdb.d; then execs postgres as the
# postgres user, with the command's arguments.
set -euo pipefail

# `docker run postgres:15 -c x=y`: the arguments are postgres's.
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi

: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chmod 0700 "$PGDATA" || true
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    # setpriv execs (runuser would stay as PID 1 and not pass SIGINT on).
    exec setpriv --reuid=postgres --regid=postgres --init-groups env HOME=/var/lib/postgresql "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
        echo "docker-entrypoint: the database is uninitialized and POSTGRES_PASSWORD is not set (or set POSTGRES_HOST_AUTH_METHOD=trust)" >&2
        exit 1
    fi
    pwfile="$(mktemp)"
    printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$pwfile"
    # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of words, as in the official image
    initdb --username="$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 ${POSTGRES_INITDB_ARGS:-} >/dev/null
    rm -f "$pwfile"
    {
        echo "listen_addresses = '*'"
    } >> "$PGDATA/postgresql.conf"
    printf 'host all all all %s\n' "$auth" >> "$PGDATA/pg_hba.conf"

    # A server on the unix socket only, for the set-up.
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" -w start >/dev/null
    export PGPASSWORD="${POSTGRES_PASSWORD:-}"
    psql=(psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$user" --host /var/run/postgresql --dbname postgres)
    if [ "$db" != postgres ]; then
        echo 'CREATE DATABASE :"db";' | "${psql[@]}" --set db="$db" >/dev/null
    fi
    for f in /docker-entrypoint-initdb.d/*; do
        case "$f" in
            *.sh) echo "docker-entrypoint: running $f"; . "$f" ;;
            *.sql) echo "docker-entrypoint: running $f"; "${psql[@]}" --dbname "$db" -f "$f" ;;
            *.sql.gz) echo "docker-entrypoint: running $f"; gunzip -c "$f" | "${psql[@]}" --dbname "$db" ;;
            *) [ -e "$f" ] && echo "docker-entrypoint: ignoring $f" ;;
        esac
    done
    unset PGPASSWORD
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "docker-entrypoint: PostgreSQL init process complete; ready for start up."
fi

exec "$@"
