"""CPU accounting for `scripts/bench ingest`: where the machine's two cores go during a measured run.

  cpu_sampler.py OUT [PID]   every 0.2 s until killed, append a line to OUT: monotonic time, the
                             machine's busy and idle ticks (/proc/stat) and PID's ticks

`window` (imported by ingest.sh's report) turns such a log into CPU per unit of work over a window
that leaves out the load generator's start (wrk loads its bodies before its clock starts), so only
the measured run is counted. Ticks are 1/100 s, so figures are good to about a percent.
"""
import os
import sys
import time

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def machine_ticks():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    # user nice system idle iowait irq softirq steal: idle and iowait are time nobody could use.
    idle = fields[3] + fields[4]
    return sum(fields) - idle, idle


def process_ticks(pid):
    if pid is None:
        return 0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def record(out, pid):
    with open(out, "a", buffering=1) as f:
        while True:
            busy, idle = machine_ticks()
            f.write(f"{time.monotonic():.3f} {busy} {idle} {process_ticks(pid)}\n")
            time.sleep(0.2)


def window(out, start, end, rate):
    """Machine and process microseconds per unit of work done at `rate` units/s between `start` and
    `end` (monotonic seconds), and the share of the machine left idle; {} without two samples."""
    with open(out) as f:
        samples = [tuple(float(x) for x in line.split()) for line in f if len(line.split()) == 4]
    inside = [s for s in samples if start <= s[0] <= end]
    if len(inside) < 2 or rate <= 0:
        return {}
    (t0, busy0, idle0, proc0), (t1, busy1, idle1, proc1) = inside[0], inside[-1]
    units = rate * (t1 - t0)
    busy, idle = busy1 - busy0, idle1 - idle0
    return {
        "machine_us": round((busy * TICK_US) / units),
        "process_us": round(((proc1 - proc0) * TICK_US) / units),
        "idle_share": round(idle / (busy + idle), 2) if busy + idle else None,
    }


if __name__ == "__main__":
    record(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
