#!/usr/bin/env bash
# Delivery benchmark: GET /v1/offers on a real `reclaim serve` (API and workers) under wrk, with a
# realistic mix (one launch in HIT_EVERY, default 10, asks for a subscriber who has an offer, which is
# then signed anew; the others find none), beside GET /healthz measured the same way in the same run;
# then the same GET paced at RATE (default 2,000/s) for its latency; then POST
# /v1/apple/retention-messaging with pre-signed realtime requests for subscribers who have offers.
# Goals: offers p99 < 5 ms at 2,000 requests/s and ≥ 0.5 of the /healthz rate; retention p99 < 20 ms.
# Usage (from scripts/bench): delivery.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Environment: SUBSCRIBERS (with offers, default 2000), SECONDS_EACH (default 10), CONNECTIONS
# (default 32), RATE, HIT_EVERY, PREPARED_STATEMENTS (database.preparedStatements: named, the default, or
# unnamed). Everything on 127.0.0.1; processes and the temp folder go on exit.
set -euo pipefail
bin="$1"; shift || true
reclaim="$(dirname "$bin")/reclaim"
subscribers="${SUBSCRIBERS:-2000}"
seconds="${SECONDS_EACH:-10}"
connections="${CONNECTIONS:-32}"
rate="${RATE:-2000}"
hit_every="${HIT_EVERY:-10}"
for tool in wrk psql curl python3; do
  command -v "$tool" >/dev/null || { echo "bench delivery needs $tool (scripts/install-deps --bench installs it)" >&2; exit 1; }
done

root="$(mktemp -d /tmp/reclaim-bench-delivery.XXXXXX)"
chmod 755 "$root"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  "$bin" pg-stop "$root/pg" >/dev/null 2>&1 || true
  rm -rf "$root"
}
trap cleanup EXIT
url="$("$bin" pg-start "$root/pg")"
"$bin" ingest-bodies --out "$root/load" --notifications "$subscribers" --subscribers "$subscribers" --realtime 5000 >&2
"$bin" offer-key "$root/key.p8"
cut -f1 "$root/load/subscribers.tsv" >"$root/tokens.txt"

export RECLAIM_CONFIG="$root/config.yaml"
cat >"$RECLAIM_CONFIG" <<YAML
apps:
  - bundleId: com.example.app
    appAppleId: 1234567890
    environments: [Sandbox]
    issuerId: 11111111-2222-3333-4444-555555555555
    signingKeys: [{keyId: BENCHKEY01, file: $root/key.p8}]
    rootCertificates: [$root/load/root.pem]
campaigns:
  - id: bench-retain
    app: com.example.app
    trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
    offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}
    messageIdentifier: bench-message
server: {rateLimitPerKey: 1000000, rateLimitBurst: 1000000}
database: {preparedStatements: ${PREPARED_STATEMENTS:-named}}
YAML
psql "$url" -qc "CREATE DATABASE reclaim_delivery" >/dev/null
export DATABASE_URL="${url/\/postgres\?//reclaim_delivery?}"
"$reclaim" migrate >&2
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$reclaim" serve --role all --host 127.0.0.1 --port "$port" >"$root/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
base="http://127.0.0.1:$port"

# The offers: the subscribers' notifications through the real pipeline.
wrk -t 2 -c "$connections" -d 120s -s scripts/bench.d/e2e-post.lua "$base" -- "$root/load/bodies.ndjson" 2 >/dev/null &
wrk_pid=$!
for _ in $(seq 1 600); do
  [ "$(psql "$DATABASE_URL" -Atc "SELECT count(*) FROM reclaim.offers")" -ge "$subscribers" ] && break
  sleep 0.2
done
kill -INT "$wrk_pid" 2>/dev/null; wait "$wrk_pid" 2>/dev/null || true
offers="$(psql "$DATABASE_URL" -Atc "SELECT count(*) FROM reclaim.offers")"
echo "bench delivery: $offers subscribers with an offer" >&2
key="$("$reclaim" apps create-key --bundle-id com.example.app 2>/dev/null | tail -1)"
# Statistics as a running database has them: the offers just written are analyzed before they are read.
psql "$DATABASE_URL" -qc "ANALYZE" >/dev/null
psql "$url" -qc "CHECKPOINT" >/dev/null

run() { # run NAME WRK-ARGS…: wrk's JSON line into $root/NAME.json
  local name="$1"; shift
  wrk -t 2 -c "$connections" -d "${seconds}s" "$@" >"$root/$name.out" 2>&1
  tail -n 1 "$root/$name.out" >"$root/$name.json"
  echo "bench delivery: $name $(cat "$root/$name.json")" >&2
}
run healthz -s scripts/bench.d/wrk-report.lua "$base/healthz"
# Retention Messaging before the launches: each launch with an offer re-signs and updates it, so the faster the
# launches, the more dead rows (and autovacuum) the offers table had when the retention phase read it after them.
run retention -s scripts/bench.d/delivery-post.lua "$base" -- "$root/load/realtime.ndjson" /v1/apple/retention-messaging
run offers -s scripts/bench.d/delivery-get.lua "$base" -- "$root/tokens.txt" "$key" "$hit_every" 0
run offers-paced -s scripts/bench.d/delivery-get.lua "$base" -- "$root/tokens.txt" "$key" "$hit_every" $((connections * 1000 / rate))
answered="$(curl -s -X POST -H 'Content-Type: application/json' --data "$(head -1 "$root/load/realtime.ndjson")" "$base/v1/apple/retention-messaging")"
grep -q '"promotionalOffer"' <<<"$answered" || { echo "bench delivery: retention answered without an offer: $answered" >&2; exit 1; }

python3 - "$root" "$rate" <<'PY'
import json, sys
root, rate = sys.argv[1], int(sys.argv[2])
healthz, offers, paced, retention = (json.load(open(f"{root}/{name}.json")) for name in ("healthz", "offers", "offers-paced", "retention"))
for name, figures in (("offers", offers), ("offers paced", paced), ("retention", retention)):
    if figures.get("non_2xx") or figures.get("socket_errors"):
        sys.exit(f"bench delivery: {name}: {figures['non_2xx']} non-2xx responses, {figures.get('socket_errors', 0)} socket errors")
ratio = offers["per_s"] / healthz["per_s"]
def goal(met): return "met" if met else "NOT met"
print(f"bench delivery: GET /v1/offers {offers['per_s']:,.0f}/s, p50 {offers['p50_ms']} ms, p99 {offers['p99_ms']} ms; "
      f"/healthz {healthz['per_s']:,.0f}/s; ratio {ratio:.2f} (goal ≥ 0.5: {goal(ratio >= 0.5)})", file=sys.stderr)
print(f"bench delivery: paced at {rate:,}/s offered: {paced['per_s']:,.0f}/s, p50 {paced['p50_ms']} ms, p99 {paced['p99_ms']} ms "
      f"(goal p99 < 5 ms at 2,000/s: {goal(paced['p99_ms'] < 5 and paced['per_s'] >= 0.9 * 2000)})", file=sys.stderr)
print(f"bench delivery: retention messaging {retention['per_s']:,.0f}/s, p50 {retention['p50_ms']} ms, p99 {retention['p99_ms']} ms "
      f"(goal p99 < 20 ms: {goal(retention['p99_ms'] < 20)})", file=sys.stderr)
print(json.dumps({"bench": "delivery", "offers_per_s": round(offers["per_s"]), "offers_p99_ms": offers["p99_ms"], "healthz_per_s": round(healthz["per_s"]),
                  "ratio": round(ratio, 2), "paced_rate": rate, "paced_per_s": round(paced["per_s"]), "paced_p50_ms": paced["p50_ms"],
                  "paced_p99_ms": paced["p99_ms"], "retention_per_s": round(retention["per_s"]), "retention_p99_ms": retention["p99_ms"]}))
PY
