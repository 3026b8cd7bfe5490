"""The report's "Rendezvous protocols (issue 15)" section: ddtkit's protocols beside MPICH and Open MPI.

Inputs (bench/results): the rt_protocol rows of runtime.jsonl (ddtkit: rget, rput, coop, chunked,
hca, hybrid; bench/protocol_sweep.hpp) and of runtime_<mpi>.jsonl (each MPI as it is, method "mpi"), and
the rt_coll rows of runtime_coll.jsonl (bench/coll_bench.cpp: static RPUT, static RGET, COOP-coll),
and the rt_load_stencil rows of runtime.jsonl (bench/load_stencil.hpp: the stencil with mixed load,
seed 002's figure 17: copies, copy bytes and times per rank under RPUT, RGET, COOP-load, HYBRID).
The MPI runs are separate processes in the same `make bench`, one after another.
"""
import json
import math
import os
from collections import defaultdict

SIDES = (("ddtkit", "runtime.jsonl"), ("MPICH", "runtime_mpich.jsonl"), ("Open MPI", "runtime_openmpi.jsonl"))
METHODS = ("rget", "rput", "coop", "chunked", "hca", "hybrid")
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
    stencil = load_stencil_rows(out)
    if not t and not stencil and not os.path.exists(os.path.join(out, "runtime_coll.jsonl")):
        return None
    md += ["## Rendezvous protocols (issue 15): RGET, RPUT, COOP-p2p, COOP-chunked and HYBRID beside the MPIs", ""]
    if t:
        sweep(md, targets, t)
    coll(md, targets, out)
    load_stencil(md, targets, stencil)
    return t or None


def sweep(md, targets, t):
    md += ["Two processes, ddtkit's buffers from `ddt_alloc`; the same messages through each MPI's own path "
           "(bench/protocol_sweep.hpp). Latency: half a round trip of blocking send/recv, microseconds. Bandwidth: "
           "a window of 4 isends/irecvs, GB/s. ddtkit's protocols are timed sample by sample in turn, each sample after "
           "two untimed transfers of its own (the first transfers after a change of protocol run slower); `hybrid` "
           "in a series of its own after them (it first idles, to forget the others' load history). `chunked` is COOP-p2p copying 1 MiB at a time; `hca` RGET striped over "
           "the receiver's core and a helper thread (COOP-hca's second engine, R = 1: it pays only where a core is idle); "
           "`hybrid` the default "
           "(RGET below 128 KiB, Table II for blocking calls, the load counters for isend/irecv, chunked from 4 MiB).", ""]
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


LOAD_PROTOCOLS = ("rput", "rget", "coop-load", "hybrid")


def load_stencil_rows(out):
    """(np, message bytes, grid) -> protocol -> rank -> row, from runtime.jsonl's rt_load_stencil rows
    (a later run of the same configuration replaces an earlier one)."""
    cells = defaultdict(lambda: defaultdict(dict))
    path = os.path.join(out, "runtime.jsonl")
    if not os.path.exists(path):
        return cells
    with open(path) as f:
        for r in (json.loads(line) for line in f if line.strip()):
            if r.get("suite") == "rt_load_stencil":
                cells[(r["np"], r["bytes"], r["case"])][r["method"]][r["rank"]] = r
    return cells


def spread(xs):
    """max / mean and the largest |x - mean| / mean: 1 and 0 at the ideal balance (every rank the mean)."""
    mean = sum(xs) / len(xs) if xs else 0
    if mean <= 0:
        return None, None
    return max(xs) / mean, max(abs(x - mean) for x in xs) / mean


def load_stencil(md, targets, cells):
    """Seed 002's figure 17: the copies of a stencil exchange with mixed load, per rank, per protocol."""
    if not cells:
        return
    md += ["### Stencil with mixed load (seed 002, figure 17): copies per rank, static protocols against COOP-load", "",
           "bench/load_stencil.hpp: a non-periodic grid of P processes over the two slowest dimensions, each face whole "
           "rows of doubles; rank r updates 1 + r % 3 fields and receives their halos from every neighbour, one "
           "message of the given size per field and face, and sends each neighbour the faces of that neighbour's "
           "fields (isend/irecv, waitall). So ranks send and receive different numbers of messages: a static protocol "
           "leaves the copies unbalanced (RPUT: a rank copies its sends; RGET: its receives), COOP-load balances them "
           "with the load counters. Per rank and per iteration (ranks in order, separated by /): the rendezvous copies "
           "it made itself (a COOP transfer counts one on each side), its copy shares (each copy counted by the share of "
           "its message it moved: a COOP transfer split x / n counts x / n to the receiver and the rest to the sender, "
           "so the shares of a message add up to one), the MiB they moved, the time they took (figure 17c), and its "
           "median time per iteration. Imbalance = max over ranks / mean (1 = the ideal balance, every rank the mean); "
           "`from ideal` = the largest |rank - mean| / mean, of the copy shares and (in brackets) of the whole copies. "
           "COOP-load may split a message in proportion (seed 002: \"the less loaded side copies, or both in "
           "proportion\"), so whole copies count a 1% share as a copy on each side: the shares are the copy count "
           "that the balance is about. Counted after untimed iterations for five time constants of the load "
           "history (steady state). `received as`: the "
           "receives each protocol moved, summed over the ranks. With more processes than cores the times include the "
           "scheduler (marked), and the counts the order in which the scheduler let the ranks choose.", "",
           "| P | grid | message | protocol | copies | copy shares | MiB copied | copy time (us) | iteration (us) "
           "| imbalance shares | imbalance copy time | from ideal: shares (copies) | received as rget / rput / coop |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    per_np = {}  # np -> COOP-load's worst (deviation in shares, in whole copies, key, RPUT's and RGET's imbalance, oversubscribed)
    for key in sorted(cells):
        np_, nbytes, grid = key
        for proto in LOAD_PROTOCOLS:
            ranks = cells[key].get(proto)
            if not ranks:
                continue
            rows = [ranks[r] for r in sorted(ranks)]
            over = any(r.get("oversubscribed") for r in rows)
            per = lambda f, scale=1.0, spec=".2f": " / ".join(format(r[f] * scale, spec) for r in rows)
            for r in rows:
                r["shares"] = r["copy_bytes"] / nbytes if nbytes else 0
            _, dc = spread([r["copies"] for r in rows])
            ib, db = spread([r["shares"] for r in rows])
            it, _ = spread([r["copy_ns"] for r in rows])
            moved = " / ".join(format(sum(r[f] for r in rows), ".2f") for f in ("by_rget", "by_rput", "by_coop"))
            md.append(f"| {np_}{' (oversubscribed)' if over else ''} | {grid} | {size(nbytes)} | {proto} | "
                      f"{per('copies')} | {per('shares')} | {per('copy_bytes', 1 / (1 << 20))} | "
                      f"{per('copy_ns', 1e-3, '.1f')} | {per('ns', 1e-3, '.1f')} | {fmt(ib, '.3f')} | {fmt(it, '.3f')} | "
                      f"{fmt(db and 100 * db, '.1f')}% ({fmt(dc and 100 * dc, '.1f')}%) | {moved} |")
            if proto == "coop-load" and db is not None and (np_ not in per_np or db > per_np[np_][0]):
                static = [cells[key].get(p) for p in ("rput", "rget")]
                si = [spread([x[r]["copies"] for r in sorted(x)])[0] if x else None for x in static]
                per_np[np_] = (db, dc, key, si, over)
    md.append("")
    if per_np:
        measured = "; ".join(f"P={n}{' (oversubscribed)' if v[4] else ''}: {100 * v[0]:.1f}% (whole copies "
                             f"{fmt(v[1] and 100 * v[1], '.1f')}%, {size(v[2][1])})" for n, v in sorted(per_np.items()))
        peers = "; ".join(f"P={n}: RPUT {fmt(v[3][0], '.2f')}x, RGET {fmt(v[3][1], '.2f')}x"
                          for n, v in sorted(per_np.items()))
        targets.append(("Protocols: stencil with mixed load, COOP-load within 5% of the ideal balance in copy counts "
                        "(copy shares, largest |rank - mean| / mean, worst size per process count)", measured,
                        f"static imbalance (max / mean copies): {peers}",
                        all(v[0] <= 0.05 for v in per_np.values())))


def plots(out, t):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    plot_load_stencil(out, plt)
    if not t:
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


def plot_load_stencil(out, plt):
    """Figure 17(b, c): copy shares and copy time per rank, each protocol's bars side by side, for the largest
    configuration of each process count."""
    cells = load_stencil_rows(out)
    if not cells:
        return
    keys = {}
    for key in sorted(cells):
        keys[key[0]] = key  # the largest message for each process count
    keys = [keys[p] for p in sorted(keys)]
    fig, axes = plt.subplots(2, len(keys), figsize=(4.5 * len(keys), 7), squeeze=False)
    for col, key in enumerate(keys):
        protos = [p for p in LOAD_PROTOCOLS if p in cells[key]]
        for row, (field, scale, label) in enumerate((("copy_bytes", 1 / key[1], "copy shares per iteration"),
                                                     ("copy_ns", 1e-3, "copy time per iteration (us)"))):
            ax = axes[row][col]
            width = 0.8 / max(1, len(protos))
            for i, proto in enumerate(protos):
                ranks = sorted(cells[key][proto])
                ax.bar([r + i * width for r in ranks], [cells[key][proto][r][field] * scale for r in ranks],
                       width=width, label=proto)
            ranks = sorted(cells[key][protos[0]]) if protos else []
            if ranks and "coop-load" in cells[key]:
                ideal = sum(cells[key]["coop-load"][r][field] * scale for r in ranks) / len(ranks)
                ax.axhline(ideal, color="k", linestyle=":", label="ideal (COOP-load's mean)")
            ax.set_xticks([r + 0.4 - width / 2 for r in ranks])
            ax.set_xticklabels([str(r) for r in ranks])
            ax.set_xlabel("rank")
            ax.set_ylabel(label)
            over = any(r.get("oversubscribed") for p in protos for r in cells[key][p].values())
            ax.set_title(f"P={key[0]} {key[2]}, {size(key[1])}{' (oversubscribed)' if over else ''}", fontsize=9)
            if row == 0 and col == 0:
                ax.legend(fontsize=8)
    fig.suptitle("stencil with mixed load (seed 002 fig. 17b/c)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "protocols_load_stencil.png"), dpi=80)
    plt.close(fig)
