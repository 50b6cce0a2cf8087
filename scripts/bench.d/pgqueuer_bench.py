#!/usr/bin/env python3
"""Reference half of the Reclaim queue benchmark: pgqueuer (asyncpg driver).

Measures, on the PostgreSQL server named by --dsn:

* THROUGHPUT: N no-op jobs are bulk-enqueued, then --workers OS processes, each
  running one pgqueuer QueueManager on its own asyncpg connection
  (``qm.run(batch_size=...)``), drain them. The clock runs from the moment the
  (already connected, idle) workers are released until the queue table is empty,
  i.e. every job's completion has been committed to pgqueuer_log.
* WAKE LATENCY: with --workers idle QueueManagers listening, single jobs are
  enqueued one at a time (each its own committed INSERT); latency is the time
  from the enqueue call returning (commit acknowledged) to the handler starting,
  both taken with CLOCK_MONOTONIC (system-wide on Linux).

Each phase runs in a database of its own, created fresh (pgq_bench_<pid>, after a
best-effort CHECKPOINT) and dropped afterwards, so the latency phase does not
inherit the throughput phase's dead tuples/WAL. pgqueuer's schema is installed
with the library's own ``Queries.install()`` (what ``pgq install`` runs), plus
its recommended autovacuum settings (``Queries.optimize_autovacuum()``, i.e.
``pgq autovac``; --no-autovac skips them). The last stdout line is one JSON object:

  {"pgqueuer_per_s": ..., "pgqueuer_wake_p50_ms": ..., "pgqueuer_wake_p99_ms": ...,
   "pgqueuer_version": "..."}

Usage:
  python3 scripts/bench.d/pgqueuer_bench.py --dsn postgres://user@127.0.0.1:5432/postgres \
      --jobs 50000 --workers 4 --batch-size 100 --latency-samples 500

Requirements: scripts/bench.d/requirements-pgqueuer.txt (pgqueuer==1.6.0, asyncpg).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing as mp
import os
import queue as queue_mod
import statistics
import sys
import time
from urllib.parse import urlsplit

try:
    import uvloop  # pgqueuer's CLI (`pgq run`) runs on uvloop when present
except ImportError:  # pragma: no cover
    uvloop = None

ENTRYPOINT_TP = "bench_noop"
ENTRYPOINT_LAT = "bench_wake"


def log(msg: str) -> None:
    print(f"[pgqueuer-bench] {msg}", file=sys.stdout, flush=True)


def run_async(coro):
    if uvloop is not None:
        return uvloop.run(coro)
    return asyncio.run(coro)


def now_ns() -> int:
    # CLOCK_MONOTONIC is system-wide on Linux, so comparable across processes.
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


# --------------------------------------------------------------------------- worker


def worker_main(
    idx: int,
    dsn: str,
    dbname: str,
    batch_size: int,
    mode: str,
    ready_q,
    go_evt,
    stop_evt,
    counts,
    result_q,
    max_seconds: float,
) -> None:
    """One OS process running one pgqueuer QueueManager with a no-op entrypoint."""
    try:
        run_async(
            _worker_async(
                idx, dsn, dbname, batch_size, mode, ready_q, go_evt, stop_evt,
                counts, result_q, max_seconds,
            )
        )
    except Exception as exc:  # report, the parent decides
        try:
            ready_q.put(("error", idx, repr(exc)))
        except Exception:
            pass
        raise


async def _worker_async(
    idx, dsn, dbname, batch_size, mode, ready_q, go_evt, stop_evt, counts, result_q,
    max_seconds,
) -> None:
    import asyncpg
    from pgqueuer import AsyncpgDriver, Job, Queries, QueueManager

    loop = asyncio.get_running_loop()
    conn = await asyncpg.connect(dsn=dsn, database=dbname)
    try:
        # Docs (performance tuning): a dedicated asyncpg connection per QueueManager.
        qm = QueueManager(Queries(AsyncpgDriver(conn)))

        if mode == "throughput":

            @qm.entrypoint(ENTRYPOINT_TP)
            async def noop(job: Job) -> None:
                counts[idx] += 1  # own slot only: no lock needed

        else:

            @qm.entrypoint(ENTRYPOINT_LAT)
            async def wake(job: Job) -> None:
                t = now_ns()
                result_q.put_nowait((int(job.payload or b"-1"), t))

        ready_q.put(("ready", idx, None))
        # Connected and idle: wait for the parent to release all workers at once.
        await loop.run_in_executor(None, go_evt.wait)

        async def watch_stop() -> None:
            await loop.run_in_executor(None, stop_evt.wait)
            qm.shutdown.set()

        stopper = asyncio.create_task(watch_stop())
        try:
            await asyncio.wait_for(qm.run(batch_size=batch_size), timeout=max_seconds)
        finally:
            stop_evt.set()  # let the executor thread return
            await stopper
    finally:
        await conn.close(timeout=5)


# --------------------------------------------------------------------------- parent


class Workers:
    def __init__(self, args, dbname: str, mode: str, deadline: float):
        self.ctx = mp.get_context("spawn")
        self.n = args.workers
        self.ready_q = self.ctx.Queue()
        self.result_q = self.ctx.Queue()
        self.go = self.ctx.Event()
        self.stop = self.ctx.Event()
        self.counts = self.ctx.RawArray("q", self.n)
        worker_max = max(5.0, deadline - time.monotonic() + 10)
        self.procs = [
            self.ctx.Process(
                target=worker_main,
                args=(
                    i, args.dsn, dbname, args.batch_size, mode, self.ready_q, self.go,
                    self.stop, self.counts, self.result_q, worker_max,
                ),
                daemon=True,
                name=f"pgq-{mode}-{i}",
            )
            for i in range(self.n)
        ]

    def start(self) -> None:
        for p in self.procs:
            p.start()

    async def wait_ready(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        ready = 0
        end = time.monotonic() + timeout
        while ready < self.n:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("workers did not become ready in time")
            try:
                kind, idx, info = await loop.run_in_executor(
                    None, lambda: self.ready_q.get(timeout=min(left, 1.0))
                )
            except queue_mod.Empty:
                dead = [p for p in self.procs if not p.is_alive()]
                if dead:
                    raise RuntimeError(
                        f"worker {dead[0].name} exited with code {dead[0].exitcode}"
                    )
                continue
            if kind == "error":
                raise RuntimeError(f"worker {idx} failed: {info}")
            ready += 1

    def check_alive(self) -> None:
        for p in self.procs:
            if not p.is_alive():
                raise RuntimeError(f"worker {p.name} exited early with code {p.exitcode}")

    def shutdown(self, timeout: float = 15.0) -> None:
        self.stop.set()
        self.go.set()  # release any worker still waiting at the gate
        end = time.monotonic() + timeout
        for p in self.procs:
            if p.pid is None:
                continue
            p.join(max(0.1, end - time.monotonic()))
        for p in self.procs:
            if p.pid is not None and p.is_alive():
                p.terminate()
                p.join(3)
            if p.pid is not None and p.is_alive():
                p.kill()
                p.join(3)


def percentile(sorted_vals: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    if not sorted_vals:
        return float("nan")
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_vals)))
    return sorted_vals[rank - 1]


def bench_db_name(dsn: str, pid: int) -> str:
    parts = urlsplit(dsn)
    if parts.scheme not in ("postgres", "postgresql"):
        raise SystemExit("--dsn must be a postgres:// or postgresql:// URL")
    return f"pgq_bench_{pid}"


async def queue_count(conn, table: str) -> int:
    return await conn.fetchval(f'SELECT count(*) FROM "{table}"')


async def run_throughput(args, dbname: str, deadline: float, holder: dict) -> float:
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries

    conn = await asyncpg.connect(dsn=args.dsn, database=dbname)
    try:
        q = Queries(AsyncpgDriver(conn))
        table = q.qbe.settings.queue_table

        t_enq = time.perf_counter()
        chunk = 10_000
        done = 0
        while done < args.jobs:
            n = min(chunk, args.jobs - done)
            await q.enqueue([ENTRYPOINT_TP] * n, [None] * n, [0] * n)  # bulk enqueue
            done += n
        enq_s = time.perf_counter() - t_enq
        log(f"enqueued {args.jobs} jobs in bulk in {enq_s:.2f}s "
            f"({args.jobs / enq_s:,.0f}/s)")
        await conn.execute(f'ANALYZE "{table}"')

        w = Workers(args, dbname, "throughput", deadline)
        holder["workers"] = w
        w.start()
        await w.wait_ready(timeout=max(1.0, min(60.0, deadline - time.monotonic())))
        log(f"{args.workers} worker processes connected and idle; releasing them")

        t0 = time.perf_counter()
        w.go.set()
        last_report = t0
        while sum(w.counts) < args.jobs:
            await asyncio.sleep(0.02)
            w.check_alive()
            now = time.perf_counter()
            if now - last_report >= 2.0:
                c = sum(w.counts)
                log(f"  handled {c}/{args.jobs} ({c / (now - t0):,.0f}/s so far)")
                last_report = now
            if time.monotonic() > deadline:
                raise TimeoutError("throughput phase exceeded the time budget")
        t_handled = time.perf_counter()
        # Processed == completion committed (row moved from the queue table to the log).
        while await queue_count(conn, table) > 0:
            await asyncio.sleep(0.005)
            if time.monotonic() > deadline:
                raise TimeoutError("queue table never emptied")
        t1 = time.perf_counter()
        elapsed = t1 - t0
        per_s = args.jobs / elapsed
        per_worker = list(w.counts)
        log(f"drained {args.jobs} jobs in {elapsed:.3f}s -> {per_s:,.0f} jobs/s "
            f"(last handler start at {t_handled - t0:.3f}s; per worker {per_worker})")
        w.shutdown()
        holder.pop("workers", None)
        return per_s
    finally:
        await conn.close(timeout=5)


async def run_latency(args, dbname: str, deadline: float, holder: dict) -> tuple[float, float]:
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries

    loop = asyncio.get_running_loop()
    conn = await asyncpg.connect(dsn=args.dsn, database=dbname)
    try:
        q = Queries(AsyncpgDriver(conn))
        w = Workers(args, dbname, "latency", deadline)
        holder["workers"] = w
        w.start()
        await w.wait_ready(timeout=max(1.0, min(60.0, deadline - time.monotonic())))
        w.go.set()
        await asyncio.sleep(1.0)  # let every QueueManager reach LISTEN and go idle

        pause = args.latency_pause_ms / 1000.0

        before: dict[int, int] = {}

        async def one(i: int) -> int:
            before[i] = now_ns()
            await q.enqueue(ENTRYPOINT_LAT, str(i).encode())
            return now_ns()  # enqueue returned: the INSERT is committed

        def collect(expected: set[int], timeout: float) -> dict[int, int]:
            got: dict[int, int] = {}
            end = time.monotonic() + timeout
            while expected - got.keys():
                left = end - time.monotonic()
                if left <= 0:
                    break
                try:
                    i, t = w.result_q.get(timeout=left)
                except queue_mod.Empty:
                    break
                got.setdefault(i, t)
            return got

        # Warm-up (discarded): make sure all workers are listening and prepared.
        warm = max(20, 5 * args.workers)
        warm_ids = set()
        for k in range(warm):
            i = -(k + 2)
            await one(i)
            warm_ids.add(i)
            await asyncio.sleep(pause)
        got = await loop.run_in_executor(None, collect, warm_ids, 10.0)
        if len(got) != len(warm_ids):
            raise RuntimeError(f"warm-up: only {len(got)}/{len(warm_ids)} jobs ran")
        await asyncio.sleep(0.5)
        log(f"{args.workers} idle workers listening; measuring {args.latency_samples} "
            f"single enqueues, {args.latency_pause_ms} ms apart")

        sent: dict[int, int] = {}
        for i in range(args.latency_samples):
            sent[i] = await one(i)
            await asyncio.sleep(pause)
            if time.monotonic() > deadline:
                raise TimeoutError("latency phase exceeded the time budget")
        got = await loop.run_in_executor(None, collect, set(sent), 10.0)
        missing = set(sent) - got.keys()
        if missing:
            raise RuntimeError(f"{len(missing)} latency jobs never ran")
        w.check_alive()
        w.shutdown()
        holder.pop("workers", None)

        lat = sorted((got[i] - sent[i]) / 1e6 for i in sent)
        p50, p99 = percentile(lat, 50), percentile(lat, 99)
        # For context only: the same, timed from just before the enqueue call (includes
        # the enqueue round trip and commit); the commit lies between the two stamps.
        lat_b = sorted((got[i] - before[i]) / 1e6 for i in sent)
        enq = sorted((sent[i] - before[i]) / 1e6 for i in sent)
        log(f"  (from before the enqueue call: p50 {percentile(lat_b, 50):.3f} "
            f"p99 {percentile(lat_b, 99):.3f} ms; enqueue round trip p50 "
            f"{percentile(enq, 50):.3f} p99 {percentile(enq, 99):.3f} ms)")
        neg = sum(1 for x in lat if x < 0)
        log(f"wake latency ms: min {lat[0]:.3f} p50 {p50:.3f} p90 {percentile(lat, 90):.3f} "
            f"p99 {p99:.3f} max {lat[-1]:.3f} mean {statistics.fmean(lat):.3f}"
            + (f" ({neg} negative samples: handler started before enqueue returned)"
               if neg else ""))
        return p50, p99
    finally:
        await conn.close(timeout=5)


async def run_phase(args, admin, dbname, deadline, holder, phase):
    """Run one phase in a freshly created database, so the latency phase does not
    inherit the throughput phase's dead tuples and log rows; drop it afterwards."""
    import asyncpg
    from pgqueuer import AsyncpgDriver, Queries

    await admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
    try:
        # Start each phase from a clean WAL state (best effort: needs superuser
        # or pg_checkpoint), so a checkpoint left by earlier work does not land in it.
        await admin.execute("CHECKPOINT")
    except asyncpg.PostgresError as exc:
        log(f"(CHECKPOINT skipped: {exc})")
    await admin.execute(f'CREATE DATABASE "{dbname}"')
    log(f"created database {dbname} for the {phase.__name__[4:]} phase")
    try:
        conn = await asyncpg.connect(dsn=args.dsn, database=dbname)
        try:
            q = Queries(AsyncpgDriver(conn))
            await q.install()  # same DDL as `pgq install`
            if not args.no_autovac:
                await q.optimize_autovacuum()  # same as `pgq autovac`
        finally:
            await conn.close(timeout=5)
        log("installed pgqueuer schema"
            + ("" if args.no_autovac else " (+ recommended autovacuum settings, `pgq autovac`)"))
        return await asyncio.wait_for(
            phase(args, dbname, deadline, holder),
            timeout=max(1.0, deadline - time.monotonic()),
        )
    finally:
        w = holder.pop("workers", None)
        if w is not None:
            w.shutdown(timeout=5)
        await admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        log(f"dropped database {dbname}")


async def main_async(args) -> dict:
    import asyncpg
    import pgqueuer

    deadline = time.monotonic() + args.timeout
    dbname = bench_db_name(args.dsn, os.getpid())
    holder: dict = {}

    admin = await asyncpg.connect(dsn=args.dsn)
    try:
        server = await admin.fetchval("SHOW server_version")
        fsync = await admin.fetchval("SHOW fsync")
        sync_commit = await admin.fetchval("SHOW synchronous_commit")
        log(f"pgqueuer {pgqueuer.__version__}, asyncpg {asyncpg.__version__}, "
            f"PostgreSQL {server} (fsync={fsync}, synchronous_commit={sync_commit}), "
            f"loop={'uvloop' if uvloop else 'asyncio'}")
        per_s = await run_phase(args, admin, dbname, deadline, holder, run_throughput)
        p50, p99 = await run_phase(args, admin, dbname, deadline, holder, run_latency)
    finally:
        await admin.close(timeout=5)

    return {
        "pgqueuer_per_s": round(per_s, 1),
        "pgqueuer_wake_p50_ms": round(p50, 3),
        "pgqueuer_wake_p99_ms": round(p99, 3),
        "pgqueuer_version": pgqueuer.__version__,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn", required=True,
                    help="postgres:// URL of a database to connect to for CREATE/DROP DATABASE")
    ap.add_argument("--jobs", type=int, default=50_000)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--latency-samples", type=int, default=500)
    ap.add_argument("--latency-pause-ms", type=float, default=20.0,
                    help="pause between single enqueues in the latency phase")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="abort with an error after this many seconds (default 300)")
    ap.add_argument("--no-autovac", action="store_true",
                    help="skip pgqueuer's recommended autovacuum settings (pgq autovac)")
    args = ap.parse_args()
    if args.jobs < 1 or args.workers < 1 or args.batch_size < 1 or args.latency_samples < 1:
        ap.error("--jobs, --workers, --batch-size and --latency-samples must be >= 1")

    try:
        result = run_async(main_async(args))
    except (TimeoutError, asyncio.TimeoutError):
        print(f"pgqueuer_bench: ERROR: aborted after exceeding the {args.timeout:.0f}s "
              "time budget", file=sys.stderr, flush=True)
        return 2
    except Exception as exc:
        print(f"pgqueuer_bench: ERROR: {exc!r}", file=sys.stderr, flush=True)
        return 1
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
