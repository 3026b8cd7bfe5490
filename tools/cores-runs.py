#!/usr/bin/env python3
"""Issue 15's protocol targets over several runs of tools/cores-lease.sh (their OUT/log files).

    tools/cores-runs.py RUN1/log RUN2/log ...

One run's report (bench/report.py) judges every target by its own worst cell, and on the 16-core
machine the worst cell of the collectives moves from run to run: COOP-coll there chooses, message
by message, the protocol of the better static one (the by_rput / by_rget counters of
runtime_coll.jsonl say so), so its time differs from that protocol's only by noise, and the worst
of 60 cells of one run was 1.52x, 1.20x and 1.14x in three runs, each time another cell. This
prints, for each cell, the ratio measured in each run (the protocols interleaved sample by
sample, bench/coll_bench.cpp) and their median, and the same for COOP-p2p against RGET and
against the faster MPI (each MPI's run follows ddtkit's in the same log). Ratios are always
taken within one run; only the median crosses runs.
"""
import re
import statistics
import sys


def parse(path):
    coll, p2p, side = {}, {}, "ddtkit"
    for line in open(path, errors="replace"):
        if line.startswith("== MPICH"):
            side = "MPICH"
        elif line.startswith("== Open MPI"):
            side = "Open MPI"
        elif line.startswith("== ") and "ddt_" in line:
            side = "ddtkit"
        m = re.match(r"\[coll (\S+)\s+(.+?)\s+(\d+ [KM]iB) P=(\d+)\] (.*)", line)
        if m:
            times = {k: float(v) for k, v in re.findall(r"(\S+) ([\d.]+) us", m.group(5))}
            coll[(int(m.group(4)), m.group(1), m.group(2).strip(), m.group(3))] = times
            continue
        m = re.match(r"\[protocol\s+(\d+) (KiB|MiB) (\w+)\s*\] (.*)", line)
        if m:
            b = int(m.group(1)) << (10 if m.group(2) == "KiB" else 20)
            for k, _, gbs in re.findall(r"(\S+) ([\d.]+) us ([\d.]+) GB/s", m.group(4)):
                p2p[(side if k == "mpi" else k, m.group(3), b)] = float(gbs)
    return coll, p2p


def coll_ratio(times):
    """COOP-coll's time over the better static protocol's, in one run's cell; None where one is missing."""
    if not {"rput", "rget", "coop-coll"} <= set(times):
        return None
    return times["coop-coll"] / min(times["rput"], times["rget"])


def main(paths):
    runs = [parse(p) for p in paths]
    print(f"{len(runs)} runs: " + ", ".join(paths))
    print("\nCOOP-coll / the better static protocol (time), per run, and the median (target <= 1.10):")
    rows = []
    for key in sorted(set().union(*(r[0] for r in runs))):
        rs = [x for x in (coll_ratio(c[key]) for c, _ in runs if key in c) if x is not None]
        if rs:
            rows.append((statistics.median(rs), key, rs))
    for med, (np_, op, case, size), rs in sorted(rows, reverse=True)[:12]:
        print(f"  P={np_:<2} {op:7} {case:17} {size:>6}: " + " ".join(f"{x:.2f}" for x in rs) + f"  median {med:.2f}")
    if rows:
        singles = [max((x for x in map(coll_ratio, c.values()) if x is not None), default=None) for c, _ in runs]
        print(f"  worst median {max(rows)[0]:.2f}; worst single-run cell " +
              ", ".join(f"{x:.2f}" for x in singles if x is not None))
    print("\nCOOP-p2p bandwidth, messages >= 1 MiB: / RGET (target >= 1.6) and / the faster MPI (>= 1.5):")
    cells = sorted({(s, b) for _, p in runs for (k, s, b) in p if k == "coop" and b >= 1 << 20})
    worst = [9.0, 9.0]
    for shape, b in cells:
        a, m = [], []
        for _, p in runs:
            if ("coop", shape, b) not in p:
                continue
            a.append(p[("coop", shape, b)] / p[("rget", shape, b)])
            mpis = [p[(w, shape, b)] for w in ("MPICH", "Open MPI") if (w, shape, b) in p]
            if mpis:
                m.append(p[("coop", shape, b)] / max(mpis))
        worst = [min(worst[0], statistics.median(a)), min(worst[1], statistics.median(m) if m else 9.0)]
        print(f"  {shape:10} {b >> 20:>3} MiB: / RGET " + " ".join(f"{x:.2f}" for x in a) +
              f" (median {statistics.median(a):.2f}); / faster MPI " + " ".join(f"{x:.2f}" for x in m) +
              (f" (median {statistics.median(m):.2f})" if m else ""))
    print(f"  worst medians: / RGET {worst[0]:.2f}, / faster MPI {worst[1]:.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
