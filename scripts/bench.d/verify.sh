#!/usr/bin/env bash
# Benchmark "verify": real App Store notifications verified per second on one core (outer + nested JWS,
# warm chain cache) against OpenSSL's P-256 ECDSA verify rate on the same machine in the same run.
#
# This machine's speed drifts by a third within a minute (a shared VM), so one long measurement of each
# side compares two different machines. The two sides instead alternate in short rounds (ROUNDS, default
# 5: one second of openssl, then one second of each of ours), and the figures are the medians, the ratio
# the median of the rounds' ratios.
# Usage (from scripts/bench): verify.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Last line: {"bench":"verify","notifications_per_s":N,"jws_per_s":M,"openssl_verify_per_s":O,"ratio":R,...}
set -euo pipefail

bench_binary=${1:?usage: verify.sh PATH/TO/reclaim-bench}
fixtures=Tests/Fixtures/apple-sandbox-notifications
rounds="${ROUNDS:-5}"
results=()
for round in $(seq 1 "$rounds"); do
    # OpenSSL 3 prints e.g. " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  45000.0  15000.0":
    # the last column is verify/s. Match the nistp256 line only.
    openssl_output=$(openssl speed -seconds 1 ecdsap256 2>/dev/null)
    openssl_verify=$(awk '/ecdsa \(nistp256\)/ && $NF ~ /^[0-9.]+$/ { value = $NF } END { print value }' <<<"$openssl_output")
    if [[ -z "$openssl_verify" ]]; then
        echo "could not read the verify/s column from openssl speed:" >&2
        echo "$openssl_output" >&2
        exit 1
    fi
    ours=$("$bench_binary" verify "$fixtures" --seconds 1 | tail -n 1)
    echo "round $round: openssl $openssl_verify verify/s; reclaim $ours" >&2
    results+=("$openssl_verify $ours")
done

python3 - "${results[@]}" <<'PY'
import json, statistics, sys
rounds = []
for line in sys.argv[1:]:
    openssl, ours = line.split(" ", 1)
    rounds.append((float(openssl), json.loads(ours)))
median = lambda values: statistics.median(values)
ratios = [ours["jws_per_s"] / openssl for openssl, ours in rounds]
out = {
    "bench": "verify",
    "notifications_per_s": round(median([ours["notifications_per_s"] for _, ours in rounds])),
    "jws_per_s": round(median([ours["jws_per_s"] for _, ours in rounds])),
    "ingest_bodies_per_s": round(median([ours["ingest_bodies_per_s"] for _, ours in rounds])),
    "swift_crypto_verify_per_s": round(median([ours["swift_crypto_verify_per_s"] for _, ours in rounds])),
    "swift_crypto_verify_350_distinct_per_s": round(median([ours["swift_crypto_verify_350_distinct_per_s"] for _, ours in rounds])),
    "openssl_verify_per_s": round(median([openssl for openssl, _ in rounds])),
    "ratio": round(median(ratios), 2),
    "ratio_min": round(min(ratios), 2),
    "ratio_max": round(max(ratios), 2),
    "rounds": len(rounds),
}
print(json.dumps(out))
PY
