#!/usr/bin/env bash
# Ingest benchmark: notifications/s durably committed by a real `reclaim serve --role api` (HTTP on
# loopback, POST /v1/apple/notifications, each body three JWS like Apple's, the outer one verified),
# posted by wrk over 32 keep-alive connections, each body once; beside pgbench's rate for a plain
# single-row insert transaction (a 12 KB body plus a job row) on the same private PostgreSQL (fsync
# and synchronous_commit on), in the same run.
# Usage (from scripts/bench): ingest.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Environment: INGEST_SECONDS (default 10), NOTIFICATIONS (bodies signed in advance, default 60000),
# CONNECTIONS (wrk's, default 32), PREPARED_STATEMENTS (database.preparedStatements: named, the default, or
# unnamed).
# Beside the rates it prints where the CPU went in each measured run (scripts/bench.d/cpu_sampler.py):
# the machine's microseconds per stored notification and per pgbench transaction, the server
# process's share, and how much of the two cores stayed idle.
set -euo pipefail
bin="$1"; shift || true
reclaim="$(dirname "$bin")/reclaim"
seconds="${INGEST_SECONDS:-10}"
notifications="${NOTIFICATIONS:-60000}"
connections="${CONNECTIONS:-32}"
warmup=2000
for tool in wrk psql curl; do
  command -v "$tool" >/dev/null || { echo "bench ingest needs $tool (scripts/install-deps --bench installs it)" >&2; exit 1; }
done
[ -x "$reclaim" ] || { echo "bench ingest needs $reclaim (scripts/bench builds it)" >&2; exit 1; }

root="$(mktemp -d /tmp/reclaim-bench-ingest.XXXXXX)"
chmod 755 "$root"
server_pid=""
sampler_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  "$bin" pg-stop "$root/pg" >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT
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
# Each side starts from a fresh checkpoint, so neither pays for the other's WAL: pgbench writes over
# 1 GB (max_wal_size), and the checkpoint it forced used to land in Reclaim's run as a 1 s stall.
psql "$url" -qc "CHECKPOINT" >/dev/null
now() { python3 -c 'import time; print(time.monotonic())'; }
pgbench_seconds=15
python3 scripts/bench.d/cpu_sampler.py "$root/cpu-pgbench.log" & sampler_pid=$!
pgbench_out="$("$pgbin/pgbench" -n -c 16 -j 2 -T "$pgbench_seconds" -M prepared -f "$root/insert.sql" "$ref" 2>&1)"
pgbench_end="$(now)"
kill "$sampler_pid"; sampler_pid=""
pgbench_tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$pgbench_out" | head -1)"
echo "bench ingest: pgbench $pgbench_tps tps" >&2

# Reclaim: the load, signed in advance by a throw-away CA that the server is configured to trust.
echo "bench ingest: signing $((notifications + warmup)) notifications in advance" >&2
"$bin" ingest-bodies --out "$root/load" --notifications "$((notifications + warmup))" >&2
head -n "$warmup" "$root/load/bodies.ndjson" >"$root/load/warmup.ndjson"
tail -n "+$((warmup + 1))" "$root/load/bodies.ndjson" >"$root/load/measured.ndjson"
rm "$root/load/bodies.ndjson"

psql "$url" -qc "CREATE DATABASE reclaim_bench" >/dev/null
export DATABASE_URL="${url/\/postgres\?//reclaim_bench?}"
export RECLAIM_CONFIG="$root/config.yaml"
cat >"$RECLAIM_CONFIG" <<YAML
apps:
  - bundleId: com.example.app
    environments: [Sandbox]
    rootCertificates: [$root/load/root.pem]
database: {preparedStatements: ${PREPARED_STATEMENTS:-named}}
YAML
"$reclaim" migrate >&2
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$reclaim" serve --role api --host 127.0.0.1 --port "$port" >"$root/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$root/serve.log" >&2; echo "reclaim serve did not become ready" >&2; exit 1; }

stored() { psql "$DATABASE_URL" -Atc "SELECT count(*) FROM reclaim.notifications"; }
lua="scripts/bench.d/ingest-post.lua"
# Warm-up: connection pools, the chain cache, PostgreSQL's caches.
wrk -t 2 -c 32 -d 2s -s "$lua" "http://127.0.0.1:$port" -- "$root/load/warmup.ndjson" 2 >/dev/null
psql "$url" -qc "CHECKPOINT" >/dev/null
before="$(stored)"
echo "bench ingest: posting for ${seconds}s with wrk (2 threads, $connections connections)" >&2
python3 scripts/bench.d/cpu_sampler.py "$root/cpu-reclaim.log" "$server_pid" & sampler_pid=$!
wrk_out="$(wrk -t 2 -c "$connections" -d "${seconds}s" -s "$lua" "http://127.0.0.1:$port" -- "$root/load/measured.ndjson" 2)"
wrk_end="$(now)"
kill "$sampler_pid"; sampler_pid=""
after="$(stored)"
echo "$wrk_out" >&2

python3 - "$(tail -n 1 <<<"$wrk_out")" "$before" "$after" "$pgbench_tps" "$connections" "$root" "$pgbench_end" "$pgbench_seconds" "$wrk_end" <<'PY'
import json, sys
sys.path.insert(0, "scripts/bench.d")
from cpu_sampler import window
wrk, before, after, tps = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
connections, root = int(sys.argv[5]), sys.argv[6]
pgbench_end, pgbench_seconds, wrk_end = float(sys.argv[7]), float(sys.argv[8]), float(sys.argv[9])
if wrk["non_2xx"] or wrk["socket_errors"]:
    sys.exit(f"bench ingest: {wrk['non_2xx']} non-2xx responses and {wrk['socket_errors']} socket errors")
if wrk["exhausted"]:
    print("bench ingest: warning: wrk ran out of bodies and repeated some; raise NOTIFICATIONS", file=sys.stderr)
per_s = (after - before) / wrk["duration_s"]
# Each side's CPU over its measured run only, less its edges (wrk's clock starts after it has
# loaded its bodies).
pgbench_cpu = window(f"{root}/cpu-pgbench.log", pgbench_end - pgbench_seconds + 0.5, pgbench_end - 0.2, tps)
cpu = window(f"{root}/cpu-reclaim.log", wrk_end - wrk["duration_s"] + 0.5, wrk_end - 0.2, per_s)
out = {"bench": "ingest", "per_s": round(per_s), "p50_ms": wrk["p50_ms"], "p99_ms": wrk["p99_ms"], "connections": connections,
       "stored": after - before, "pgbench_tps": round(tps), "ratio": round(per_s / tps, 2),
       "machine_us_per_notification": cpu.get("machine_us"), "server_us_per_notification": cpu.get("process_us"),
       "idle_share": cpu.get("idle_share"),
       "pgbench_machine_us_per_tx": pgbench_cpu.get("machine_us"), "pgbench_idle_share": pgbench_cpu.get("idle_share")}
print(json.dumps(out, sort_keys=True))
PY
