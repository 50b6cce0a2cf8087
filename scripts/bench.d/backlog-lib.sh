# Sourced by the benchmarks that build a backlog (drain.sh, forward-drain.sh; e2e.sh takes write_config):
# functions only.

# backlog_setup NAME: expects $bin (reclaim-bench) and $n (notifications); sets $reclaim, $root, $url and $pids
# (killed on exit), starts the benchmark's PostgreSQL, writes the notifications (each for its own subscriber) and
# the offer key.
backlog_setup() {
  reclaim="$(dirname "$bin")/reclaim"
  for tool in wrk psql curl python3; do
    command -v "$tool" >/dev/null || { echo "bench $1 needs $tool (scripts/install-deps --bench installs it)" >&2; exit 1; }
  done
  root="$(mktemp -d "/tmp/reclaim-bench-$1.XXXXXX")"
  chmod 755 "$root"
  pids=()
  trap backlog_cleanup EXIT
  url="$("$bin" pg-start "$root/pg")"
  "$bin" ingest-bodies --out "$root/load" --notifications "$n" --subscribers "$n" >&2
  "$bin" offer-key "$root/SubscriptionKey_BENCHKEY01.p8"
}

backlog_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  "$bin" pg-stop "$root/pg" >/dev/null 2>&1 || true
  rm -rf "$root"
}

# write_config APP_LINES TOP_LINES: the app (its extra keys indented under it), trusting the load's root, and the
# one campaign every notification triggers, then TOP_LINES and EXTRA_YAML at the top level; exports RECLAIM_CONFIG.
# Expects $root with the load and the offer key.
write_config() {
  export RECLAIM_CONFIG="$root/config.yaml"
  cat >"$RECLAIM_CONFIG" <<YAML
apps:
  - bundleId: com.example.app
    environments: [Sandbox]
    issuerId: 11111111-2222-3333-4444-555555555555
    signingKeys: [{keyId: BENCHKEY01, file: $root/SubscriptionKey_BENCHKEY01.p8}]
$1
    rootCertificates: [$root/load/root.pem]
campaigns:
  - id: bench-retain-auto-renew-off
    app: com.example.app
    trigger: DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED
    offer: {productId: com.example.monthly, offerIdentifier: RETAIN50}
    holdoutPercent: 0
$2
${EXTRA_YAML:-}
YAML
}

# create_database NAME: a fresh database on the benchmark's PostgreSQL, migrated; exports DATABASE_URL.
create_database() {
  psql "$url" -qc "CREATE DATABASE $1" >/dev/null
  export DATABASE_URL="${url/\/postgres\?//$1?}"
  "$reclaim" migrate >&2
}

sql() { psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -Atc "$1"; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# CPU ticks (1/CLK_TCK s) of a process, and of PostgreSQL's processes (its backends alive now).
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pg_ticks() { local total=0 pid; for pid in $(pgrep -f "postgres.*$root/pg|postgres:" || true); do [ -r "/proc/$pid/stat" ] && total=$((total + $(ticks "$pid"))); done; echo "$total"; }

# store_backlog PORT TABLE: wrk posts every notification once to the server at PORT, until TABLE
# (reclaim.notifications or reclaim.offers) holds $n rows.
store_backlog() {
  wrk -t 2 -c 32 -d 300s -s scripts/bench.d/e2e-post.lua "http://127.0.0.1:$1" -- "$root/load/bodies.ndjson" 2 0 >/dev/null &
  local wrk_pid=$!
  until [ "$(sql "SELECT count(*) FROM $2")" -ge "$n" ]; do sleep 1; done
  kill -INT "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" || true
}
