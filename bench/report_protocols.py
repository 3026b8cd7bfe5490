"""The report's "Rendezvous protocols (issue 15)" section: ddtkit's protocols beside MPICH and Open MPI.

Inputs (bench/results): the rt_protocol rows of runtime.jsonl (ddtkit: rget, rput, coop, chunked,
hybrid; bench/protocol_sweep.hpp) and of runtime_<mpi>.jsonl (each MPI as it is, method "mpi"), and
the rt_coll rows of runtime_coll.jsonl (bench/coll_bench.cpp: static RPUT, static RGET, COOP-coll).
The MPI runs are separate processes in the same `make bench`, one after another.
"""
import json
import math
import os
from collections import defaultdict

SIDES = (("ddtkit", "runtime.jsonl"), ("MPICH", "runtime_mpich.jsonl"), ("Open MPI", "runtime_openmpi.jsonl"))
METHODS = ("rget", "rput", "coop", "chunked", "hybrid")
MPIS = ("MPICH", "Open MPI")


def fmt(x, spec=".2f"):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def load(out):
    """(shape, op) -> bytes -> who -> row; who a ddtkit method or an MPI's name."""
    t = defaultdict(lambda: defaultdict(dict))
    for side, name in SIDES:
        path = os.path.join(out, name)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for r in (json.loads(line) for line in f if line.strip()):
                if r.get("suite") == "rt_protocol":
                    t[(r["case"], r["op"])][r["bytes"]][r["method"] if side == "ddtkit" else side] = r
    return t


def section(md, targets, out):
    t = load(out)
    if not t:
        return None
    md += ["## Rendezvous protocols (issue 15): RGET, RPUT, COOP-p2p, COOP-chunked and HYBRID beside the MPIs", "",
           "Two processes, ddtkit's buffers from `ddt_alloc`; the same messages through each MPI's own path "
           "(bench/protocol_sweep.hpp). Latency: half a round trip of blocking send/recv, microseconds. Bandwidth: "
           "a window of 4 isends/irecvs, GB/s. `chunked` is COOP-p2p copying 1 MiB at a time; `hybrid` the default "
           "(RGET below 256 KiB, Table II for blocking calls, the load counters for isend/irecv, chunked from 4 MiB).", ""]
    worst_rget, worst_mpi = None, None
    for shape in ("contiguous", "vector"):
        for op, unit in (("bw", "GB/s"), ("latency", "us")):
            rows = t.get((shape, op))
            if not rows:
                continue
            md += [f"### {shape}, {'bandwidth' if op == 'bw' else 'latency'} ({unit})", "",
                   "| size | " + " | ".join(METHODS) + " | MPICH | Open MPI | coop / rget | coop / faster MPI |",
                   "|---|" + "---|" * (len(METHODS) + 4)]
            for b in sorted(rows):
                c = rows[b]
                val = (lambda r: r.get("gbs")) if op == "bw" else (lambda r: r["ns"] / 1e3)
                cells = [fmt(val(c[k])) if k in c else "n/a" for k in list(METHODS) + list(MPIS)]
                ratio_rget = ratio_mpi = None
                if op == "bw" and "coop" in c and "rget" in c:
                    ratio_rget = c["coop"]["gbs"] / c["rget"]["gbs"]
                    fm = max([c[m]["gbs"] for m in MPIS if m in c], default=None)
                    ratio_mpi = c["coop"]["gbs"] / fm if fm else None
                    if b >= 1 << 20:
                        if worst_rget is None or ratio_rget < worst_rget[0]:
                            worst_rget = (ratio_rget, shape, b)
                        if ratio_mpi is not None and (worst_mpi is None or ratio_mpi < worst_mpi[0]):
                            worst_mpi = (ratio_mpi, shape, b)
                md.append(f"| {size(b)} | " + " | ".join(cells) + f" | {fmt(ratio_rget)} | {fmt(ratio_mpi)} |")
            md.append("")
    if worst_rget:
        targets.append(("Protocols: COOP-p2p >= 1.6x RGET bandwidth, messages >= 1 MiB",
                        f"worst {worst_rget[0]:.2f}x ({worst_rget[1]}, {size(worst_rget[2])})", "", worst_rget[0] >= 1.6))
    if worst_mpi:
        targets.append(("Protocols: COOP-p2p >= 1.5x the faster MPI's bandwidth, messages >= 1 MiB",
                        f"worst {worst_mpi[0]:.2f}x ({worst_mpi[1]}, {size(worst_mpi[2])})", "", worst_mpi[0] >= 1.5))
    coll(md, targets, out)
    return t


def coll(md, targets, out):
    """Scatter, gather and reduce under static RPUT, static RGET and COOP-coll (seed 002, figs 14-16)."""
    path = os.path.join(out, "runtime_coll.jsonl")
    if not os.path.exists(path):
        return
    cells = defaultdict(dict)
    with open(path) as f:
        for r in (json.loads(line) for line in f if line.strip()):
            if r.get("suite") == "rt_coll" and r.get("ns"):
                cells[(r.get("np", 0), r["case"], r.get("op", ""), r["bytes"])][r["method"]] = r["ns"]
    if not cells:
        return
    md += ["### Collectives: static RPUT, static RGET and COOP-coll (microseconds)", "",
           "| processes | case | op | bytes per process | rput | rget | coop-coll | coll / better static |",
           "|---|---|---|---|---|---|---|---|"]
    worst = None
    for key in sorted(cells):
        c = cells[key]
        names = {k.lower().replace("_", "-"): v for k, v in c.items()}
        rput, rget = names.get("rput"), names.get("rget")
        co = names.get("coop-coll") or names.get("coll")
        best = min([x for x in (rput, rget) if x], default=None)
        ratio = co / best if co and best else None
        if ratio is not None and (worst is None or ratio > worst[0]):
            worst = (ratio, key)
        md.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {fmt(rput and rput / 1e3, '.1f')} | "
                  f"{fmt(rget and rget / 1e3, '.1f')} | {fmt(co and co / 1e3, '.1f')} | {fmt(ratio)} |")
    md.append("")
    if worst:
        targets.append(("Protocols: COOP-coll at least as fast as the better static protocol (within 10% noise)",
                        f"worst {worst[0]:.2f}x ({worst[1][1]} {worst[1][2]}, {worst[1][0]})", "", worst[0] <= 1 / 0.9))


def plots(out, t):
    if not t:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, shape in zip(axes, ("contiguous", "vector")):
        rows = t.get((shape, "bw"), {})
        for who in list(METHODS) + list(MPIS):
            xs = [b for b in sorted(rows) if who in rows[b]]
            if xs:
                ax.plot(xs, [rows[b][who]["gbs"] for b in xs], marker="o", label=who,
                        linestyle="--" if who in MPIS else "-")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message bytes")
        ax.set_ylabel("bandwidth (GB/s)")
        ax.set_title(f"rendezvous protocols, {shape} (seed 002 fig. 7/13)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "protocols.png"), dpi=80)
    plt.close(fig)
