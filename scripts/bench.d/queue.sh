#!/usr/bin/env bash
# Queue benchmark: Reclaim's queue (1 and 4 worker pools, no-op jobs, batch 100) and pgqueuer
# (4 processes, batch 100) on the same private PostgreSQL with production durability, in one run.
set -euo pipefail
bin="$1"; shift || true
jobs="${JOBS:-50000}"
root="$(mktemp -d /tmp/reclaim-bench-pg.XXXXXX)"
chmod 755 "$root"
trap '"$bin" pg-stop "$root/pg" >/dev/null 2>&1 || true; rm -rf "$root"' EXIT
url="$("$bin" pg-start "$root/pg")"
echo "bench queue: PostgreSQL at $url" >&2

# Like for like with pgqueuer (batch 100), then with larger batches (500), which this queue's
# one-commit-per-batch design rewards.
ours="$("$bin" queue --database-url "$url" --jobs "$jobs" --batch 100 --lanes 2 | tee /dev/stderr | tail -1)"
ours500="$("$bin" queue --database-url "$url" --jobs "$jobs" --batch 500 --lanes 2 --samples 0 | tee /dev/stderr | tail -1)"

# pgqueuer goes into the Python tools' virtual environment (Debian's Python refuses system installs: PEP 668).
. "$(dirname "$0")/../lib/python-env" && reclaim_make_venv
python3 -c 'import pgqueuer, asyncpg' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check -r scripts/bench.d/requirements-pgqueuer.txt >&2
theirs="$(python3 scripts/bench.d/pgqueuer_bench.py --dsn "$url" --jobs "$jobs" --workers 4 --batch-size 100 --latency-samples 500 | tee /dev/stderr | tail -1)"

python3 - "$ours" "$theirs" "$ours500" <<'PY'
import json, sys
ours, theirs, ours500 = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
out = {"bench": "queue", **ours, **theirs}
out["batch500_workers_1_per_s"] = ours500["workers_1_per_s"]
out["batch500_workers_4_per_s"] = ours500["workers_4_per_s"]
out["ratio"] = round(ours["workers_4_per_s"] / theirs["pgqueuer_per_s"], 2)
out["ratio_batch500"] = round(ours500["workers_4_per_s"] / theirs["pgqueuer_per_s"], 2)
print(json.dumps(out, sort_keys=True))
PY
