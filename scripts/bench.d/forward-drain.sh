#!/usr/bin/env bash
# Forward-drain benchmark: forwarding alone, where `e2e`'s forwarding cost goes. NOTIFICATIONS (default 20000)
# notifications are stored and processed by `reclaim serve --role all` while its one forwarding target (a local
# receiver, `reclaim-bench sink`) is paused (`reclaim webhooks pause`), so their forwards wait in the queue; after
# VACUUM ANALYZE the target is resumed and the drain of the forwards alone is measured: forwards/s, and the CPU per
# forward of the server, of PostgreSQL's processes and of the receiver (from /proc), and one line of JSON.
# Usage (from scripts/bench): forward-drain.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Environment: NOTIFICATIONS, FORWARDING_CONCURRENCY (forwarding.concurrency), EXTRA_YAML (appended to the config),
# PERF_OUT (a file: `perf record -g` of the server during the drain).
set -euo pipefail
bin="$1"; shift || true
n="${NOTIFICATIONS:-20000}"
source scripts/bench.d/backlog-lib.sh
backlog_setup forward-drain
"$bin" sink "$root/sink.port" &
sink_pid=$!
pids+=($sink_pid)
for _ in $(seq 1 100); do [ -s "$root/sink.port" ] && break; sleep 0.1; done
target="http://127.0.0.1:$(cat "$root/sink.port")/apple"
write_config "    forwarding: [{url: '$target'}]" "forwarding: {allowPrivate: true${FORWARDING_CONCURRENCY:+, concurrency: $FORWARDING_CONCURRENCY}}"
create_database reclaim_forward_drain
port="$(free_port)"
"$reclaim" serve --role all --host 127.0.0.1 --port "$port" >"$root/serve.log" 2>&1 &
server_pid=$!
pids+=($server_pid)
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
"$reclaim" webhooks pause "$target" >/dev/null

# The backlog: every notification stored and its offer made, every forward waiting.
echo "bench forward-drain: storing and processing $n notifications, forwarding paused" >&2
store_backlog "$port" reclaim.offers
psql "$DATABASE_URL" -qc "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null

# The forwards alone.
server_before="$(ticks "$server_pid")"; pg_before="$(pg_ticks)"; sink_before="$(ticks "$sink_pid")"
started="$(date +%s.%N)"
[ -n "${PERF_OUT:-}" ] && { perf record -F 999 -g -p "$server_pid" -o "$PERF_OUT" >/dev/null 2>&1 & perf_pid=$!; }
"$reclaim" webhooks resume "$target" >/dev/null
until [ "$(sql "SELECT count(*) FROM reclaim.jobs WHERE target IS NOT NULL AND state <> 'completed'")" -eq 0 ]; do sleep 0.2; done
ended="$(date +%s.%N)"
[ -n "${PERF_OUT:-}" ] && { kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; }
server_cpu=$(($(ticks "$server_pid") - server_before)); pg_cpu=$(($(pg_ticks) - pg_before)); sink_cpu=$(($(ticks "$sink_pid") - sink_before))
forwards="$(sql "SELECT count(*) FROM reclaim.jobs WHERE target IS NOT NULL AND state = 'completed'")"
[ "$forwards" -eq "$n" ] || { echo "bench forward-drain: $forwards forwards completed for $n notifications" >&2; exit 1; }
python3 - "$started" "$ended" "$n" "$server_cpu" "$pg_cpu" "$sink_cpu" "$(getconf CLK_TCK)" <<'PY'
import json, sys
started, ended = float(sys.argv[1]), float(sys.argv[2])
n, server, pg, sink, hz = (int(x) for x in sys.argv[3:8])
seconds = ended - started
per_s = n / seconds
server_us, pg_us, sink_us = (ticks / hz / n * 1e6 for ticks in (server, pg, sink))
print(f"bench forward-drain: {n} forwards in {seconds:.2f}s = {per_s:,.0f}/s; CPU per forward: server {server_us:.0f} µs, "
      f"PostgreSQL {pg_us:.0f} µs, receiver {sink_us:.0f} µs (PostgreSQL: its backends alive at the end; polled every 0.2 s)",
      file=sys.stderr)
print(json.dumps({"bench": "forward-drain", "forwards": n, "per_s": round(per_s), "server_cpu_us": round(server_us),
                  "postgres_cpu_us": round(pg_us), "receiver_cpu_us": round(sink_us)}))
PY
