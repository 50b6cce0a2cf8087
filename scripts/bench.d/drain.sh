#!/usr/bin/env bash
# Drain benchmark: the workers alone. NOTIFICATIONS (default 20000) notifications, each for its own subscriber
# and each making an offer, are stored by `reclaim serve --role api`; then `reclaim serve --role worker` alone
# processes the backlog. The first WARMUP (default 1000) jobs warm it up, then ANALYZE gives the planner the
# statistics autovacuum gives any live database; the rest is measured. Reports jobs/s and the CPU per job of
# the worker process and of PostgreSQL's processes (from /proc), and one line of JSON.
# Usage (from scripts/bench): drain.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Environment: NOTIFICATIONS, WARMUP, EXTRA_YAML (appended to the config, e.g. "worker: {batchSize: 128}").
set -euo pipefail
bin="$1"; shift || true
n="${NOTIFICATIONS:-20000}"
warmup="${WARMUP:-1000}"
source scripts/bench.d/backlog-lib.sh
backlog_setup drain
write_config "" ""
create_database reclaim_drain

# The backlog, stored by an API-only server.
port="$(free_port)"
"$reclaim" serve --role api --host 127.0.0.1 --port "$port" >"$root/api.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
echo "bench drain: storing $n notifications" >&2
store_backlog "$port" reclaim.notifications
kill "${pids[0]}" && wait "${pids[0]}" 2>/dev/null || true
pids=()
psql "$DATABASE_URL" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null

# The worker alone: warm-up, ANALYZE, then the measured rest.
"$reclaim" serve --role worker --host 127.0.0.1 --port "$(free_port)" >"$root/worker.log" 2>&1 &
worker_pid=$!
pids+=($worker_pid)
until [ "$(sql "SELECT count(*) FROM reclaim.jobs WHERE state = 'completed'")" -ge "$warmup" ]; do sleep 0.1; done
psql "$DATABASE_URL" -qc "ANALYZE" >/dev/null
done_before="$(sql "SELECT count(*) FROM reclaim.jobs WHERE state = 'completed'")"
worker_before="$(ticks "$worker_pid")"
pg_before="$(pg_ticks)"
started="$(date +%s.%N)"
until [ "$(sql "SELECT count(*) FROM reclaim.jobs WHERE state <> 'completed'")" -eq 0 ]; do sleep 0.2; done
ended="$(date +%s.%N)"
worker_cpu=$(($(ticks "$worker_pid") - worker_before))
pg_cpu=$(($(pg_ticks) - pg_before))
offers="$(sql 'SELECT count(*) FROM reclaim.offers')"
[ "$offers" -eq "$n" ] || { echo "bench drain: $offers offers for $n notifications" >&2; exit 1; }
python3 - "$started" "$ended" "$((n - done_before))" "$worker_cpu" "$pg_cpu" "$(getconf CLK_TCK)" <<'PY'
import json, sys
started, ended, jobs, worker, pg, hz = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
seconds = ended - started
per_s = jobs / seconds
worker_ms, pg_ms = worker / hz / jobs * 1000, pg / hz / jobs * 1000
print(f"bench drain: {jobs} jobs in {seconds:.2f}s = {per_s:,.0f}/s; CPU per job: worker {worker_ms:.3f} ms, PostgreSQL {pg_ms:.3f} ms "
      "(its backends alive at the end; polled every 0.2 s)", file=sys.stderr)
print(json.dumps({"bench": "drain", "jobs": jobs, "per_s": round(per_s), "worker_cpu_ms": round(worker_ms, 3), "postgres_cpu_ms": round(pg_ms, 3)}))
PY
