#!/usr/bin/env bash
# Backfill benchmark: `reclaim backfill` of IDS transaction ids (default 10,000) against a stand-in of Apple's Get All
# Subscription Statuses on loopback (`reclaim-bench apple-stand-in`) that enforces Apple's production limit, 50
# requests in any second, with 429 and Retry-After, and answers each request LATENCY_MS late (default 100). Reports:
# - the achieved rate in ids/s and as a share of the budget (goal >= 0.9);
# - the 429s the stand-in answered (goal: almost none after the first second);
# - the CPU the backfill process used per id (user + system), and PostgreSQL's, from the same run.
# The reference is the budget itself, measured in the same run: the stand-in's limit.
# Usage (from scripts/bench): backfill.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Environment: IDS, LATENCY_MS, RATE (the stand-in's limit, default 50).
set -euo pipefail
bin="$1"; shift || true
reclaim="$(dirname "$bin")/reclaim"
ids="${IDS:-10000}"
latency="${LATENCY_MS:-100}"
limit="${RATE:-50}"
for tool in psql python3; do
  command -v "$tool" >/dev/null || { echo "bench backfill needs $tool (scripts/install-deps --bench installs it)" >&2; exit 1; }
done
root="$(mktemp -d /tmp/reclaim-bench-backfill.XXXXXX)"
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
"$bin" apple-stand-in "$root/apple" --rate "$limit" --latency-ms "$latency" >"$root/stand-in.out" 2>&1 &
stand_in_pid=$!
for _ in $(seq 1 100); do [ -s "$root/apple/port" ] && break; sleep 0.1; done
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
campaigns:
  - id: winback
    app: com.example.bench
    trigger: EXPIRED
    offer: {productId: com.example.monthly, offerIdentifier: WINBACK50}
    conditions: {lapsedWithin: 30d}
YAML
"$reclaim" migrate >&2
python3 -c "print('\n'.join(str(7_000_000_000_000_000 + i) for i in range($ids)))" >"$root/ids.txt"
pg_ticks() { # CPU ticks of the cluster's postmaster and every backend alive now, their finished children's included
  local total=0 pid postmaster
  postmaster="$(head -n 1 "$root/pg/data/postmaster.pid" 2>/dev/null || true)"
  for pid in $postmaster $(pgrep -P "$postmaster" 2>/dev/null || true); do
    total=$((total + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
echo "bench backfill: $ids ids against a stand-in enforcing $limit/s, answering in $latency ms" >&2
pg_before="$(pg_ticks)"
TIMEFORMAT='%R %U %S'
{ time "$reclaim" backfill --transactions "$root/ids.txt" --app com.example.bench --environment Production >"$root/backfill.out" 2>"$root/backfill.err"; } 2>"$root/time"
pg_after="$(pg_ticks)"
tail -n 3 "$root/backfill.out" >&2
# One pass to Apple (issue 75): the preview and the decision read the import; the stand-in's count must not move.
{ time "$reclaim" backfill --transactions "$root/ids.txt" --app com.example.bench --environment Production --evaluate --dry-run >"$root/preview.out" 2>"$root/preview.err"; } 2>"$root/preview.time"
tail -n 2 "$root/preview.out" >&2
{ time "$reclaim" backfill --transactions "$root/ids.txt" --app com.example.bench --environment Production --evaluate >"$root/decide.out" 2>"$root/decide.err"; } 2>"$root/decide.time"
tail -n 2 "$root/decide.out" >&2
kill -TERM "$stand_in_pid"; wait "$stand_in_pid" || true; stand_in_pid=""
read -r wall user sys <"$root/time"
read -r preview_wall _ _ <"$root/preview.time"
read -r decide_wall _ _ <"$root/decide.time"
python3 - "$ids" "$wall" "$user" "$sys" "$limit" "$root/stand-in.out" "$root/backfill.out" "$pg_before" "$pg_after" "$(getconf CLK_TCK)" "$preview_wall" "$decide_wall" <<'PY'
import json, re, sys
ids, wall, user, sys_, limit = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
stand_in = json.loads(open(sys.argv[6]).read().strip().splitlines()[-1])
out = open(sys.argv[7]).read()
summary = [line for line in out.splitlines() if re.match(r"backfill: \d+ ids: ", line)][-1]
seeded = int(re.search(r"ids: (\d+) seeded", summary).group(1))
pg_cpu = (int(sys.argv[9]) - int(sys.argv[8])) / int(sys.argv[10])
rate = ids / wall
figures = {
    "ids": ids, "seeded": seeded, "seconds": round(wall, 1), "ids_per_s": round(rate, 1), "budget_per_s": limit,
    "share_of_budget": round(rate / limit, 3), "goal_share": 0.9, "rate_limited_429": stand_in["rate_limited"],
    "requests": stand_in["requests"], "backfill_cpu_ms_per_id": round((user + sys_) * 1000 / ids, 3),
    "postgres_cpu_ms_per_id": round(pg_cpu * 1000 / ids, 3),
    # After the import, from the kept answers: Apple not asked (requests stays at ids).
    "preview_seconds": round(float(sys.argv[11]), 1), "preview_ids_per_s": round(ids / float(sys.argv[11]), 1),
    "decide_seconds": round(float(sys.argv[12]), 1), "decide_ids_per_s": round(ids / float(sys.argv[12]), 1),
    "preview_400k_minutes": round(400_000 / (ids / float(sys.argv[11])) / 60, 1),
}
print(f"backfill: {ids} ids in {wall:.1f} s = {rate:.1f}/s, {rate / limit:.1%} of the {limit:.0f}/s budget; "
      f"{stand_in['rate_limited']} 429s; {figures['backfill_cpu_ms_per_id']} ms CPU per id (PostgreSQL {figures['postgres_cpu_ms_per_id']})", file=sys.stderr)
print(json.dumps(figures, sort_keys=True))
PY
