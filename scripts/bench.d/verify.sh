#!/usr/bin/env bash
# Benchmark "verify": real App Store notifications verified per second (outer + nested JWS, warm chain cache)
# against OpenSSL's P-256 ECDSA verify rate measured on the same machine in the same run.
# Usage (from scripts/bench): verify.sh PATH/TO/release/reclaim-bench   (cwd: repository root)
# Last line: {"bench":"verify","notifications_per_s":N,"jws_per_s":M,"openssl_verify_per_s":O,"ratio":R}
set -euo pipefail

bench_binary=${1:?usage: verify.sh PATH/TO/reclaim-bench}
fixtures=Tests/Fixtures/apple-sandbox-notifications

# OpenSSL 3 prints e.g. " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  45000.0  15000.0":
# the last column is verify/s. Match the nistp256 line only.
openssl_output=$(openssl speed -seconds 3 ecdsap256 2>/dev/null)
openssl_verify=$(awk '/ecdsa \(nistp256\)/ && $NF ~ /^[0-9.]+$/ { value = $NF } END { print value }' <<<"$openssl_output")
if [[ -z "$openssl_verify" ]]; then
    echo "could not read the verify/s column from openssl speed:" >&2
    echo "$openssl_output" >&2
    exit 1
fi

bench_output=$("$bench_binary" verify "$fixtures")
echo "$bench_output"
result=$(tail -n 1 <<<"$bench_output")
notifications=$(sed -n 's/.*"notifications_per_s":\([0-9.]*\).*/\1/p' <<<"$result")
jws=$(sed -n 's/.*"jws_per_s":\([0-9.]*\).*/\1/p' <<<"$result")
if [[ -z "$notifications" || -z "$jws" ]]; then
    echo "unexpected output from $bench_binary verify: $result" >&2
    exit 1
fi

echo "openssl ecdsap256 verify/s: $openssl_verify"
awk -v n="$notifications" -v j="$jws" -v o="$openssl_verify" 'BEGIN {
    printf "{\"bench\":\"verify\",\"notifications_per_s\":%d,\"jws_per_s\":%d,\"openssl_verify_per_s\":%d,\"ratio\":%.2f}\n", n, j, o, j / o
}'
