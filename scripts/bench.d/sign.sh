#!/usr/bin/env bash
# Offer signing throughput: `reclaim-bench sign` (one thread, full StoreKit 1 signature) against
# `openssl speed ecdsap256` (one thread, raw ECDSA P-256 sign), so the ratio shows our overhead on any machine.
# Usage: scripts/bench.d/sign.sh PATH/TO/release/reclaim-bench
# Last line: {"bench":"sign","per_s":N,"openssl_per_s":N,"ratio":R}
set -euo pipefail

bench=${1:?usage: sign.sh PATH/TO/reclaim-bench}
[[ -x $bench ]] || { echo "sign.sh: $bench is not an executable" >&2; exit 1; }
command -v openssl >/dev/null || { echo "sign.sh: openssl not found" >&2; exit 1; }

# openssl 3 prints e.g. "256 bits ecdsa (nistp256)   0.0000s   0.0001s  41234.5  13456.7"; the 7th field is sign/s.
openssl_out=$(openssl speed -seconds 3 ecdsap256 2>/dev/null)
openssl_per_s=$(awk '/bits ecdsa \(nistp256\)/ { print $7; exit }' <<<"$openssl_out")
[[ $openssl_per_s =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "sign.sh: could not read sign/s from openssl speed:" >&2; echo "$openssl_out" >&2; exit 1; }

bench_out=$("$bench" sign)
echo "$bench_out"
per_s=$(tail -n 1 <<<"$bench_out" | sed -n 's/.*"per_s"[[:space:]]*:[[:space:]]*\([0-9.]*\).*/\1/p')
[[ $per_s =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "sign.sh: could not read per_s from: $(tail -n 1 <<<"$bench_out")" >&2; exit 1; }

ratio=$(awk -v a="$per_s" -v b="$openssl_per_s" 'BEGIN { printf "%.3f", a / b }')
echo "openssl speed ecdsap256: ${openssl_per_s} sign/s; reclaim: ${per_s} sign/s"
printf '{"bench":"sign","per_s":%s,"openssl_per_s":%s,"ratio":%s}\n' "$per_s" "$openssl_per_s" "$ratio"
