#!/usr/bin/env bash
# Reconciliation benchmark: what the hourly `reclaim reconcile` costs for a base of about 400,000 subscribers. A stand-in
# of Apple's Get Notification History on loopback (`reclaim-bench apple-stand-in --history N`) holds NOTIFICATIONS
# signed notifications (default 45,000: 400,000 monthly subscribers renew about 13,300 times a day, plus other
# notifications, about 15,000 a day, so 72 hours hold 45,000) spread over the last 72 hours, 20 to a page, each page
# LATENCY_MS late (default 100). Three runs, timed:
# - the first `--since 72h`: every notification new (a Reclaim that missed them all);
# - the second `--since 72h`: the steady state of the default hourly run (every notification a duplicate);
# - `--since 6h`: a shorter window, one of the knobs (reconciliation.since).
# Reports per run: Apple calls (pages), seconds, the CPU of `reclaim reconcile` and of PostgreSQL. The reference is
# the first run's pages, Apple's page size being 20: pages = notifications / 20.
# Usage (from scripts/bench): reconcile.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Environment: NOTIFICATIONS, LATENCY_MS.
set -euo pipefail
bin="$1"; shift || true
reclaim="$(dirname "$bin")/reclaim"
notifications="${NOTIFICATIONS:-45000}"
latency="${LATENCY_MS:-100}"
for tool in psql python3; do
  command -v "$tool" >/dev/null || { echo "bench reconcile needs $tool (scripts/install-deps --bench installs it)" >&2; exit 1; }
done
root="$(mktemp -d /tmp/reclaim-bench-reconcile.XXXXXX)"
chmod 755 "$root"
stand_in_pid=""
cleanup() {
  [ -n "$stand_in_pid" ] && kill "$stand_in_pid" 2>/dev/null || true
  "$bin" pg-stop "$root/pg" >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT
url="$("$bin" pg-start "$root/pg")"
export DATABASE_URL="$url"
mkdir -p "$root/apple"
echo "bench reconcile: signing $notifications notifications for the stand-in's history" >&2
"$bin" apple-stand-in "$root/apple" --history "$notifications" --latency-ms "$latency" >"$root/stand-in.out" 2>&1 &
stand_in_pid=$!
for _ in $(seq 1 3000); do [ -s "$root/apple/port" ] && break; sleep 0.1; done
port="$(cat "$root/apple/port")"
"$bin" offer-key "$root/api.p8"
export RECLAIM_CONFIG="$root/config.yaml"
cat >"$RECLAIM_CONFIG" <<YAML
apps:
  - bundleId: com.example.bench
    appAppleId: 1234567890
    environments: [Production]
    issuerId: 11111111-2222-3333-4444-555555555555
    signingKeys: [{keyId: BENCHAPI01, file: $root/api.p8}]
    rootCertificates: [$root/apple/root.pem]
    serverAPI: {signingKey: BENCHAPI01, baseURL: "http://127.0.0.1:$port"}
YAML
"$reclaim" migrate >&2
pg_ticks() { # CPU ticks of the cluster's postmaster and every backend alive now, their finished children's included
  local total=0 pid postmaster
  postmaster="$(head -n 1 "$root/pg/data/postmaster.pid" 2>/dev/null || true)"
  for pid in $postmaster $(pgrep -P "$postmaster" 2>/dev/null || true); do
    total=$((total + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
TIMEFORMAT='%R %U %S'
run() { # run NAME SINCE: one timed reconcile; appends "NAME wall user sys pg_ticks found new" to $root/runs
  local before after
  before="$(pg_ticks)"
  { time "$reclaim" reconcile --since "$2" --app com.example.bench --environment Production >"$root/$1.out" 2>"$root/$1.err"; } 2>"$root/$1.time"
  after="$(pg_ticks)"
  tail -n 1 "$root/$1.out" >&2
  echo "$1 $(cat "$root/$1.time") $((after - before)) $(tail -n 1 "$root/$1.out")" >>"$root/runs"
}
run first 72h
run steady 72h
run short 6h
kill -TERM "$stand_in_pid"; wait "$stand_in_pid" || true; stand_in_pid=""
python3 - "$root/runs" "$notifications" "$(getconf CLK_TCK)" "$root/stand-in.out" <<'PY'
import json, re, sys
runs, notifications, tick = open(sys.argv[1]).read().splitlines(), int(sys.argv[2]), int(sys.argv[3])
stand_in = json.loads(open(sys.argv[4]).read().strip().splitlines()[-1])
figures = {"notifications_72h": notifications, "history_pages_total": stand_in["history_pages"]}
for line in runs:
    name, wall, user, sys_, pg, rest = line.split(" ", 5)
    found = int(re.search(r"(\d+) in Apple's history", rest).group(1))
    new = int(re.search(r"(\d+) new", rest).group(1))
    pages = (found + 19) // 20 or 1
    figures[name] = {"seconds": round(float(wall), 1), "found": found, "new": new, "pages": pages,
                     "reconcile_cpu_s": round(float(user) + float(sys_), 1), "postgres_cpu_s": round(int(pg) / tick, 1),
                     "cpu_share_of_an_hour": round((float(user) + float(sys_) + int(pg) / tick) / 3600, 4)}
    print(f"reconcile {name}: {found} found ({new} new) in {pages} pages, {float(wall):.1f} s; "
          f"CPU {float(user) + float(sys_):.1f} s reconcile + {int(pg) / tick:.1f} s PostgreSQL", file=sys.stderr)
print(json.dumps(figures, sort_keys=True))
PY
