#!/usr/bin/env bash
# End-to-end benchmark: NOTIFICATIONS signed notifications (DID_CHANGE_RENEWAL_STATUS /
# AUTO_RENEW_DISABLED, each for its own subscriber, with appAccountToken, productId and
# originalPurchaseDate) posted by wrk to a real `reclaim serve` (role all: API and workers in one
# process) whose config has one campaign on that trigger (holdout 0) and a signing key made for the
# run, so every notification ends as a signed offer in reclaim.offers. Reports:
# - notifications/s from first post to last offer ready (the sustained end-to-end rate);
# - p50/p99 from a notification's 200 to its offer being ready, from the database;
# - beside it, in the same run, the ingest-only rate: the same posting against
#   `reclaim serve --role api` (no workers) into a fresh database, and the ratio e2e/ingest;
# - the end-to-end rate again with forwarding on (every notification also forwarded to one local
#   receiver, `reclaim-bench sink`), beside the rate without: done when the last offer is ready and the last
#   forward delivered.
# Goals: ≥ 1,000 notifications/s end to end, ≥ 0.5 of ingest alone, p99 < 50 ms paced at 1,000/s; forwarding costs
# < 20% of the end-to-end rate.
# Usage (from scripts/bench): e2e.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Environment: NOTIFICATIONS (measured, default 20000), WARMUP (posted and processed first, not
# measured, default 1000), CONNECTIONS (wrk's, default 32), TIMEOUT (seconds each phase may take
# before the bench gives up, default 120 + NOTIFICATIONS/100), RATE (the paced phase's offered load,
# default 1000/s), FORWARDING_CONCURRENCY (forwarding.concurrency in the forwarding phase), EXTRA_YAML (appended to the server's config, e.g. "worker: {batchSize: 64}", to compare
# settings).
# Four phases, each on a fresh database: ingest alone, end to end, and end to end with forwarding as fast as
# wrk can post (the rates), then end to end with the load paced at RATE (the latency: at saturation every figure is
# the backlog's, so the p99 goal is judged where the load is what the goal names).
# Everything listens on 127.0.0.1 only; processes and the temp folder go on exit.
set -euo pipefail
bin="$1"; shift || true
reclaim="$(dirname "$bin")/reclaim"
notifications="${NOTIFICATIONS:-20000}"
warmup="${WARMUP:-1000}"
connections="${CONNECTIONS:-32}"
rate="${RATE:-1000}"
pause_ms=$((connections * 1000 / rate))
timeout="${TIMEOUT:-$((120 + notifications / 100))}"
for tool in wrk psql curl python3; do
  command -v "$tool" >/dev/null || { echo "bench e2e needs $tool (scripts/install-deps --bench installs it)" >&2; exit 1; }
done
[ -x "$reclaim" ] || { echo "bench e2e needs $reclaim (scripts/bench builds it)" >&2; exit 1; }

root="$(mktemp -d /tmp/reclaim-bench-e2e.XXXXXX)"
chmod 755 "$root"
server_pid=""
wrk_pid=""
sink_pid=""
cleanup() {
  [ -n "$wrk_pid" ] && kill "$wrk_pid" 2>/dev/null || true
  [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  "$bin" pg-stop "$root/pg" >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT
# Commit timestamps on: a row's commit is when it was stored, or ready (see the figures below).
url="$("$bin" pg-start "$root/pg" --track-commit-timestamp on)"
echo "bench e2e: PostgreSQL at $url" >&2

# The load: one subscriber per notification (a campaign offers a subscriber nothing again within its
# cooldown), signed in advance by a throw-away CA that the server is configured to trust.
total=$((warmup + notifications))
echo "bench e2e: signing $total notifications in advance (3 JWS each)" >&2
"$bin" ingest-bodies --out "$root/load" --notifications "$total" --subscribers "$total" >&2
head -n "$warmup" "$root/load/bodies.ndjson" >"$root/load/warmup.ndjson"
tail -n "+$((warmup + 1))" "$root/load/bodies.ndjson" >"$root/load/measured.ndjson"
rm "$root/load/bodies.ndjson"
"$bin" offer-key "$root/SubscriptionKey_BENCHKEY01.p8"

source scripts/bench.d/backlog-lib.sh
write_config "" ""

sql() { psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -AtF ' ' -c "$1"; }

# start_server ROLE DATABASE: a fresh, migrated database and `reclaim serve --role ROLE` on it.
start_server() {
  psql "$url" -qc "CREATE DATABASE $2" >/dev/null
  export DATABASE_URL="${url/\/postgres\?//$2?}"
  "$reclaim" migrate >&2
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$reclaim" serve --role "$1" --host 127.0.0.1 --port "$port" >"$root/serve-$1.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || { tail -n 30 "$root/serve-$1.log" >&2; echo "reclaim serve --role $1 did not become ready" >&2; exit 1; }
}

stop_server() {
  kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# post FILE TABLE TARGET: wrk posts every body of FILE once; returns when TABLE (reclaim.notifications
# or reclaim.offers) holds TARGET rows, then stops wrk and leaves its JSON line in $root/wrk.json.
# Polls every second with psql: the figures come from commit timestamps, not from this loop, so it
# need not be finer. (Every 0.25 s, psql and its backend took 4% of the machine's CPU under perf,
# taken from the processes measured.)
post() {
  local file="$1" table="$2" target="$3" pause="${4:-0}" deadline=$((SECONDS + timeout)) offers notifications pending
  wrk -t 2 -c "$connections" -d "${timeout}s" -s scripts/bench.d/e2e-post.lua "http://127.0.0.1:$port" -- "$file" 2 "$pause" >"$root/wrk.out" &
  wrk_pid=$!
  while :; do
    read -r notifications offers pending <<<"$(sql "SELECT (SELECT count(*) FROM reclaim.notifications), (SELECT count(*) FROM reclaim.offers),
      (SELECT count(*) FROM reclaim.jobs WHERE state IN ('available', 'running', 'retryable'))")"
    if [ "$table" = offers ]; then have="$offers"; else have="$notifications"; fi
    [ "$have" -ge "$target" ] && break
    kill -0 "$server_pid" 2>/dev/null || { tail -n 30 "$root"/serve-*.log >&2; echo "bench e2e: reclaim serve exited" >&2; exit 1; }
    if [ "$table" = offers ] && [ "$pending" -eq 0 ] && [ "$notifications" -ge "$target" ]; then
      # Every notification processed, yet offers are missing: say why instead of waiting out the timeout.
      echo "bench e2e: all $notifications notifications processed but only $offers offers; decisions and failed jobs:" >&2
      sql "SELECT outcome, reason, count(*) FROM reclaim.campaign_decisions GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5" >&2
      sql "SELECT state, left(last_error, 300), count(*) FROM reclaim.jobs WHERE state <> 'completed' GROUP BY 1, 2 LIMIT 5" >&2
      exit 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "bench e2e: gave up after ${timeout}s: $notifications notifications, $offers offers, $pending jobs waiting (TIMEOUT raises the bound)" >&2
      exit 1
    fi
    sleep 1
  done
  # Every body has its 200 by now (a row commits before its answer, the offer long after); SIGINT
  # makes wrk print its summary and end.
  kill -INT "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" || true
  wrk_pid=""
  tail -n 1 "$root/wrk.out" >"$root/wrk.json"
  python3 - "$root/wrk.json" "$(wc -l <"$file")" <<'PY'
import json, sys
wrk, bodies = json.load(open(sys.argv[1])), int(sys.argv[2])
if wrk["non_2xx"] or wrk["socket_errors"]:
    sys.exit(f"bench e2e: {wrk['non_2xx']} non-2xx responses and {wrk['socket_errors']} socket errors")
if wrk["exhausted"]:
    print("bench e2e: warning: wrk reconnected and posted some bodies twice", file=sys.stderr)
if wrk["requests"] != bodies:
    print(f"bench e2e: warning: wrk counted {wrk['requests']} responses for {bodies} bodies", file=sys.stderr)
PY
}

# Phase: warm up (pools, chain cache, PostgreSQL's caches), checkpoint, note the database clock,
# post the measured bodies. Rows received after the mark are the measured ones.
measure() {
  local table="$1" pause="${2:-0}"
  echo "bench e2e: warm-up, $warmup notifications" >&2
  post "$root/load/warmup.ndjson" "$table" "$warmup"
  # Statistics, as autovacuum's autoanalyze gives any database within its first minute. Without them a
  # fresh database's cached plans keep what an empty table suggested: every foreign-key check of an
  # offer (a backend plans it once) scanned all of reclaim.campaign_decisions, a cost growing with each
  # row, which made the end-to-end rate a measure of the run's length (1,033 against 2,668 jobs/s drained).
  psql "$DATABASE_URL" -qc "ANALYZE" >/dev/null
  psql "$url" -qc "CHECKPOINT" >/dev/null
  mark="$(sql "SELECT clock_timestamp()")"
  echo "bench e2e: posting $notifications notifications with wrk (2 threads, $connections connections, pause ${pause} ms)" >&2
  post "$root/load/measured.ndjson" "$table" "$total" "$pause"
}

# Ingest alone: the same posting, no workers; rate from the first measured notification's commit to
# the last one's, as for the end-to-end rate below.
start_server api reclaim_ingest
measure notifications
read -r ingest_stored ingest_seconds <<<"$(sql "
  SELECT count(*), round(extract(epoch FROM max(pg_xact_commit_timestamp(xmin)) - min(pg_xact_commit_timestamp(xmin)))::numeric, 3)
  FROM reclaim.notifications WHERE received_at > '$mark'")"
stop_server
# Its database goes, so autovacuum has nothing of it to do during the end-to-end phase.
psql "$url" -qc "DROP DATABASE reclaim_ingest WITH (FORCE)" >/dev/null
echo "bench e2e: ingest alone: $ingest_stored notifications in ${ingest_seconds}s" >&2

# End to end: API and workers in one process.
start_server all reclaim_e2e
measure offers
cp "$root/wrk.json" "$root/wrk-e2e.json"
# Rate: from the first measured notification's commit (its 200 follows at once; the first post came
# one request's time before it) to the last measured offer's commit (the offer is ready: GET
# /v1/offers returns it from then on).
# Latency, per offer, twice:
# - p50_ms/p99_ms: offers.created_at − notifications.received_at. Both are now() of their
#   transaction, i.e. its start, not its commit: received_at is when the ingest transaction began
#   (it may begin a moment before the request arrived, then waits for its turn to write, writes and
#   commits; the 200 follows the commit); created_at is when the worker's batch transaction began
#   (the batch already claimed), which then runs every job of the batch (up to worker.batchSize)
#   and commits, so the offer is ready later than created_at says, by up to a whole batch's work.
# - commit_p50_ms/commit_p99_ms: the same pair by commit timestamps (track_commit_timestamp is on
#   in this PostgreSQL; neither table's rows are updated in this run, so xmin is the writer's):
#   from the notification's commit (its 200) to the offer's (ready). This is the exact figure.
# figures: measured offers, seconds from first stored to last ready, seconds over which they were
# stored, and the latency percentiles below, for the offers of notifications received after $mark.
figures() {
  sql "
  WITH measured AS (
    SELECT o.created_at - n.received_at AS by_start,
           pg_xact_commit_timestamp(o.xmin) - pg_xact_commit_timestamp(n.xmin) AS by_commit,
           pg_xact_commit_timestamp(n.xmin) AS stored, pg_xact_commit_timestamp(o.xmin) AS ready
    FROM reclaim.offers o JOIN reclaim.notifications n ON o.source_notification_uuid = n.notification_uuid
    WHERE n.received_at > '$mark')
  SELECT count(*),
         round(extract(epoch FROM max(ready) - min(stored))::numeric, 3),
         round(extract(epoch FROM max(stored) - min(stored))::numeric, 3),
         round(extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY by_start)) * 1000, 1),
         round(extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY by_start)) * 1000, 1),
         round(extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY by_commit)) * 1000, 1),
         round(extract(epoch FROM percentile_cont(0.99) WITHIN GROUP (ORDER BY by_commit)) * 1000, 1)
  FROM measured"
}
read -r offers e2e_seconds posted_seconds p50 p99 commit_p50 commit_p99 <<<"$(figures)"
decisions="$(sql "SELECT count(*) FILTER (WHERE outcome = 'offered') || ' offered of ' || count(*) FROM reclaim.campaign_decisions")"
stop_server
echo "bench e2e: end to end: $offers offers in ${e2e_seconds}s; decisions: $decisions" >&2
psql "$url" -qc "DROP DATABASE reclaim_e2e WITH (FORCE)" >/dev/null

# End to end with forwarding: the same, with every notification also forwarded to a local receiver.
"$bin" sink "$root/sink.port" &
sink_pid=$!
for _ in $(seq 1 100); do [ -s "$root/sink.port" ] && break; sleep 0.1; done
sink_port="$(cat "$root/sink.port")"
cp "$RECLAIM_CONFIG" "$root/config-plain.yaml"
python3 - "$RECLAIM_CONFIG" "$sink_port" "${FORWARDING_CONCURRENCY:-}" <<'PY'
import sys
path, port, concurrency = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read().replace("    rootCertificates:", f"    forwarding: [{{url: 'http://127.0.0.1:{port}/apple'}}]\n    rootCertificates:", 1)
open(path, "w").write(text + "forwarding: {allowPrivate: true" + (f", concurrency: {concurrency}" if concurrency else "") + "}\n")
PY
start_server all reclaim_forward
# CPU ticks (1/100 s) of the receiver and of the whole machine over the phase: the receiver would run elsewhere in
# production, so its share of the two cores is part of what forwarding costs here and not there.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
busy() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
sink_before="$(ticks "$sink_pid")"; busy_before="$(busy)"
measure offers
read -r forward_offers forward_seconds _ _ _ _ _ <<<"$(figures)"
sink_cpu=$(( $(ticks "$sink_pid") - sink_before )); busy_cpu=$(( $(busy) - busy_before ))
deadline=$((SECONDS + timeout))
until [ "$(sql "SELECT count(*) FROM reclaim.jobs WHERE kind = 'forward' AND state <> 'completed'")" -eq 0 ]; do
  [ "$SECONDS" -ge "$deadline" ] && { echo "bench e2e: forwards still pending after ${timeout}s" >&2; exit 1; }
  sleep 0.25
done
# The last measured forward delivered, from the first measured notification's commit.
read -r forwarded forwarded_seconds <<<"$(sql "
  SELECT count(*), round(extract(epoch FROM max(j.completed_at) - min(pg_xact_commit_timestamp(n.xmin)))::numeric, 3)
  FROM reclaim.jobs j JOIN reclaim.notifications n USING (notification_uuid)
  WHERE j.kind = 'forward' AND n.received_at > '$mark'")"
stop_server
kill "$sink_pid" 2>/dev/null && wait "$sink_pid" 2>/dev/null || true
sink_pid=""
cp "$root/config-plain.yaml" "$RECLAIM_CONFIG"
echo "bench e2e: with forwarding: $forward_offers offers in ${forward_seconds}s; $forwarded forwards delivered in ${forwarded_seconds}s" >&2
echo "bench e2e: during that phase the receiver (reclaim-bench sink) used $((sink_cpu * 100 / (busy_cpu > 0 ? busy_cpu : 1)))% of the machine's busy CPU ($sink_cpu of $busy_cpu ticks)" >&2
psql "$url" -qc "DROP DATABASE reclaim_forward WITH (FORCE)" >/dev/null

# End to end again, the load paced at RATE: the latency where the load is what the goal names.
start_server all reclaim_paced
measure offers "$pause_ms"
cp "$root/wrk.json" "$root/wrk-paced.json"
read -r paced_offers paced_seconds paced_posted_seconds paced_p50 paced_p99 paced_commit_p50 paced_commit_p99 <<<"$(figures)"
stop_server
echo "bench e2e: paced: $paced_offers offers, stored over ${paced_posted_seconds}s" >&2

python3 - "$notifications" "$offers" "$e2e_seconds" "$posted_seconds" "$p50" "$p99" "$commit_p50" "$commit_p99" \
  "$ingest_stored" "$ingest_seconds" "$connections" "$root/wrk-e2e.json" \
  "$rate" "$paced_offers" "$paced_posted_seconds" "$paced_p50" "$paced_p99" "$paced_commit_p50" "$paced_commit_p99" \
  "$forward_offers" "$forward_seconds" "$forwarded" "$forwarded_seconds" <<'PY'
import json, sys
notifications, offers = int(sys.argv[1]), int(sys.argv[2])
e2e_seconds, posted_seconds = float(sys.argv[3]), float(sys.argv[4])
p50, p99, commit_p50, commit_p99 = (float(v) for v in sys.argv[5:9])
ingest_stored, ingest_seconds, connections = int(sys.argv[9]), float(sys.argv[10]), int(sys.argv[11])
wrk = json.load(open(sys.argv[12]))
rate, paced_offers, paced_posted_seconds = int(sys.argv[13]), int(sys.argv[14]), float(sys.argv[15])
paced_p50, paced_p99, paced_commit_p50, paced_commit_p99 = (float(v) for v in sys.argv[16:20])
forward_offers, forward_seconds = int(sys.argv[20]), float(sys.argv[21])
forwarded, forwarded_seconds = int(sys.argv[22]), float(sys.argv[23])
if forward_offers != notifications or forwarded != notifications:
    sys.exit(f"bench e2e: with forwarding, expected {notifications} offers and forwards, got {forward_offers} and {forwarded}")
if offers != notifications or ingest_stored != notifications:
    sys.exit(f"bench e2e: expected {notifications} measured notifications, got {offers} offers and {ingest_stored} stored by ingest alone")
if min(e2e_seconds, posted_seconds, ingest_seconds) <= 0:
    sys.exit("bench e2e: too few notifications to time (one commit held them all); raise NOTIFICATIONS")
per_s = offers / e2e_seconds
ingest_per_s = ingest_stored / ingest_seconds
ratio = per_s / ingest_per_s
posted_per_s = notifications / posted_seconds
def goal(met): return "met" if met else "NOT met"
print(f"bench e2e: {per_s:,.0f} notifications/s from first post to last offer ready (goal ≥ 1,000: {goal(per_s >= 1000)})", file=sys.stderr)
print(f"bench e2e: ingest alone {ingest_per_s:,.0f}/s; ratio {ratio:.2f} (goal ≥ 0.5: {goal(ratio >= 0.5)})", file=sys.stderr)
print(f"bench e2e: at saturation, 200 → offer ready: p50 {p50} ms, p99 {p99} ms by transaction start; "
      f"by commit: p50 {commit_p50} ms, p99 {commit_p99} ms (the backlog's figures)", file=sys.stderr)
# Sustained: a notification is done when its offer is ready and its forward delivered. Counting the offers alone
# would reward forwards that fall behind (a backlog that must still be sent, with the CPU it takes).
forward_per_s = forward_offers / max(forward_seconds, forwarded_seconds)
forward_cost = 1 - forward_per_s / per_s
print(f"bench e2e: with forwarding to one receiver {forward_per_s:,.0f}/s end to end (last offer ready and last forward "
      f"delivered) against {per_s:,.0f}/s without: costs {forward_cost:.0%} (goal < 20%: {goal(forward_cost < 0.2)}); "
      f"the offers alone {forward_offers / forward_seconds:,.0f}/s, the last forward delivered {forwarded_seconds}s after "
      f"the first notification ({forwarded / forwarded_seconds:,.0f} forwards/s)", file=sys.stderr)
paced_per_s = paced_offers / paced_posted_seconds if paced_posted_seconds > 0 else 0
print(f"bench e2e: paced at {rate:,}/s offered ({paced_per_s:,.0f}/s stored), 200 → offer ready: p50 {paced_commit_p50} ms, "
      f"p99 {paced_commit_p99} ms by commit (goal p99 < 50 ms: {goal(paced_commit_p99 < 50)}); "
      f"by transaction start p50 {paced_p50} ms, p99 {paced_p99} ms", file=sys.stderr)
print(f"bench e2e: during it, notifications were stored at {posted_per_s:,.0f}/s and answered in p50 {wrk['p50_ms']} ms, "
      f"p99 {wrk['p99_ms']} ms (wrk); stored faster than offered means a backlog, which the latency includes", file=sys.stderr)
out = {"bench": "e2e", "per_s": round(per_s), "p50_ms": p50, "p99_ms": p99, "commit_p50_ms": commit_p50, "commit_p99_ms": commit_p99,
       "ingest_per_s": round(ingest_per_s), "ratio": round(ratio, 2), "notifications": notifications, "connections": connections,
       "posted_per_s": round(posted_per_s), "http_p50_ms": wrk["p50_ms"], "http_p99_ms": wrk["p99_ms"],
       "paced_rate": rate, "paced_per_s": round(paced_per_s), "paced_p50_ms": paced_commit_p50, "paced_p99_ms": paced_commit_p99,
       "forward_per_s": round(forward_per_s), "forward_cost": round(forward_cost, 2),
       "forwards_per_s": round(forwarded / forwarded_seconds)}
print(json.dumps(out))
PY
