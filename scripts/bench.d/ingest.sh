#!/usr/bin/env bash
# Ingest benchmark: notifications/s durably committed over HTTP (POST /v1/apple/notifications on
# loopback, 32 keep-alive connections, each body three signed JWS verified by the server) beside
# pgbench's rate for a plain single-row insert transaction of a 12 KB body plus a job row, on the
# same private PostgreSQL (fsync and synchronous_commit on), in the same run.
set -euo pipefail
bin="$1"; shift || true
root="$(mktemp -d /tmp/reclaim-bench-pg.XXXXXX)"
chmod 755 "$root"
trap '"$bin" pg-stop "$root/pg" >/dev/null 2>&1 || true; rm -rf "$root"' EXIT
url="$("$bin" pg-start "$root/pg")"
pgbin="$(pg_config --bindir 2>/dev/null || ls -d /usr/lib/postgresql/*/bin | tail -1)"
echo "bench ingest: PostgreSQL at $url" >&2

# Reference: pgbench, 16 clients, 15 s, one transaction = a 12 KB notification row + a job row.
psql "$url" -qc "CREATE DATABASE pgbench_ref" >/dev/null
ref="${url/\/postgres\?//pgbench_ref?}"
psql "$ref" -q >/dev/null <<'SQL'
CREATE TABLE notifications (uuid uuid PRIMARY KEY, payload text NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, uuid uuid NOT NULL, state text NOT NULL DEFAULT 'available');
-- 1,000 ready-made 12 KB bodies of random base64 (like a JWS; TOAST cannot squeeze it much), so the
-- measured transactions spend nothing on making their body.
CREATE TABLE bodies (id int PRIMARY KEY, body text NOT NULL);
INSERT INTO bodies SELECT i, (SELECT string_agg(encode(sha256((i * 1000 + j)::text::bytea), 'base64'), '') FROM generate_series(1, 273) j)
FROM generate_series(1, 1000) i;
SQL
# One statement, so one transaction and one round trip: the most favourable form for the reference.
cat >"$root/insert.sql" <<'SQL'
\set n random(1, 1000)
WITH n AS (
  INSERT INTO notifications (uuid, payload) SELECT gen_random_uuid(), body FROM bodies WHERE id = :n
  RETURNING uuid)
INSERT INTO jobs (uuid) SELECT uuid FROM n;
SQL
pgbench_out="$("$pgbin/pgbench" -n -c 16 -j 2 -T 15 -M prepared -f "$root/insert.sql" "$ref" 2>&1)"
pgbench_tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$pgbench_out" | head -1)"
echo "bench ingest: pgbench $pgbench_tps tps" >&2

ours="$("$bin" ingest --database-url "$url" --notifications "${NOTIFICATIONS:-10000}" --connections 32 | tee /dev/stderr | tail -1)"
python3 - "$ours" "$pgbench_tps" <<'PY'
import json, sys
ours, tps = json.loads(sys.argv[1]), float(sys.argv[2])
out = {"bench": "ingest", **ours, "pgbench_tps": round(tps), "ratio": round(ours["per_s"] / tps, 2)}
print(json.dumps(out, sort_keys=True))
PY
