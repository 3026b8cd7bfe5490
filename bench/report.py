#!/usr/bin/env python3
"""Turns the benchmark's JSON lines into bench/results/report.md and PNG plots.

Every ratio comes from one process: ddtkit / MPICH from the MPICH run, ddtkit / Open MPI from
the Open MPI run (each run also times memcpy and the hand-written loop beside ddtkit).
Times are medians over interleaved repetitions (bench/harness.hpp).
"""
import json
import math
import os
import platform
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_runtime  # noqa: E402  the intra-node runtime's section (issue 10)
import report_spin  # noqa: E402  the NIC offload model's section (issue 14)
import report_protocols  # noqa: E402  the rendezvous protocols' section (issue 15)
import report_gpu  # noqa: E402  the GPU layer's section (issue 12)

OUT = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
RUNS = {"MPICH": "mpich.jsonl", "Open MPI": "openmpi.jsonl"}


def load():
    rows = {}
    for label, name in RUNS.items():
        path = os.path.join(OUT, name)
        if os.path.exists(path):
            with open(path) as f:
                rows[label] = [json.loads(line) for line in f if line.strip()]
    return rows


def index(rows):
    """(suite, case, params, op) -> {method: ns}."""
    t = defaultdict(dict)
    for r in rows:
        t[(r["suite"], r["case"], r["params"], r["op"])][r["method"]] = r["ns"]
    return t


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def machine():
    # Results carried back from another machine (tools/cores-lease.sh) name it in machine.txt.
    try:
        with open(os.path.join(OUT, "machine.txt")) as f:
            return f.read().strip()
    except OSError:
        pass
    model, caches = "unknown CPU", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        base = "/sys/devices/system/cpu/cpu0/cache"
        for d in sorted(os.listdir(base)):
            p = os.path.join(base, d)
            lvl = open(os.path.join(p, "level")).read().strip()
            typ = open(os.path.join(p, "type")).read().strip()
            size = open(os.path.join(p, "size")).read().strip()
            caches.append(f"L{lvl} {typ.lower()} {size}")
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, " + ", ".join(caches) + f"; {platform.system()} {platform.release()}"


def fmt(x, spec=".2f"):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def main():
    rows = load()
    if not rows and not os.path.exists(os.path.join(OUT, "runtime.jsonl")):
        sys.exit(f"no results in {OUT}")
    idx = {label: index(r) for label, r in rows.items()}
    md = ["# ddtkit benchmark report", "",
          f"Machine: {machine()}.", "",
          "Every figure is a ratio of medians measured in one process: ddtkit beside "
          + (" and ".join(f"{l} ({rows[l][0]['mpi']})" for l in rows) or "the MPIs")
          + ", memcpy of the same bytes and the hand-written loop. Speedup = peer time / ddtkit time.", ""]
    targets = []  # (target, measured, peers, met)

    # ---- DDTBench ---------------------------------------------------------------------------------
    kernels = defaultdict(lambda: defaultdict(list))  # (kernel, op) -> metric -> values
    per_set = []
    any_idx = next(iter(idx.values()), {})
    for key in sorted(any_idx):
        suite, case, params, op = key
        if suite != "ddtbench":
            continue
        vals = {}
        for label, t in idx.items():
            m = t.get(key, {})
            if "ddtkit" in m and "mpi" in m:
                vals[label] = (m["mpi"] / m["ddtkit"], m["manual"] / m["ddtkit"], m["memcpy"] / m["ddtkit"])
        if not vals:
            continue
        vs_faster = min(v[0] for v in vals.values())
        vs_manual = min(v[1] for v in vals.values())
        kernels[(case, op)]["faster"].append(vs_faster)
        kernels[(case, op)]["manual"].append(vs_manual)
        for label, v in vals.items():
            kernels[(case, op)][label].append(v[0])
        per_set.append((case, params, op, vals, vs_faster, vs_manual))
    if kernels:
        md += ["## DDTBench kernels", "",
               "Per kernel, geometric mean over its default parameter sets of the speedup over each MPI, "
               "over the faster of the two, and over the application's own loop.", "",
               "| kernel | op | vs MPICH | vs Open MPI | vs faster MPI | vs hand-written loop |", "|---|---|---|---|---|---|"]
        for op in ("pack", "unpack"):
            faster_all = []
            worst, worst_manual = None, None
            for (case, o), m in sorted(kernels.items()):
                if o != op:
                    continue
                g = gmean(m["faster"])
                gm = gmean(m["manual"])
                faster_all.append(g)
                worst = g if worst is None else min(worst, g)
                worst_manual = gm if worst_manual is None else min(worst_manual, gm)
                md.append(f"| {case} | {op} | {fmt(gmean(m.get('MPICH', [])))} | {fmt(gmean(m.get('Open MPI', [])))} | "
                          f"{fmt(g)} | {fmt(gm)} |")
            G = gmean(faster_all)
            # Issue 9: the geometric mean is reported (its 3x target was withdrawn); every kernel
            # at least level with each MPI and with its own loop.
            targets.append((f"DDTBench {op}: geometric mean over kernels, speedup vs the faster MPI (reported)",
                            f"{G:.2f}x", "", None))
            targets.append((f"DDTBench {op}: every kernel >= 1.0x each MPI", f"worst {worst:.2f}x", "", worst >= 1.0))
            targets.append((f"DDTBench {op}: every kernel >= 1.0x its hand-written loop", f"worst {worst_manual:.2f}x", "",
                            worst_manual >= 1.0))
        md.append("")

    # ---- vector sweep -------------------------------------------------------------------------------
    sweep = defaultdict(dict)  # (base, payload, block) -> label -> {method: ratio to memcpy}
    for label, t in idx.items():
        for (suite, case, params, op), m in t.items():
            if suite != "sweep" or op != "pack":
                continue
            payload, block = params.split(" block ")
            block = int(block.split()[0])
            # A method timed at the base 16 B past a line ("+16") is a fraction of memcpy at that offset.
            sweep[(case.split()[1], payload, block)][label] = {
                k: (m["memcpy+16"] if k.endswith("+16") else m["memcpy"]) / v for k, v in m.items()}
    if sweep:
        md += ["## Vector sweep (pack)", "", "Throughput as a fraction of memcpy of the same payload; stride = 2 x block.", "",
               "`read alone`: the blocks read and not copied (suite_sweep.cpp's floor: no pack of the cell can beat it), "
               "blocks of 64 B and more.", "",
               "Every buffer starts on a page. `+16 B`: the same vector 16 B past a line (a fresh large malloc's "
               "offset), as a fraction of memcpy at that offset, blocks of 64 B, 512 B and 4 KiB: each block then "
               "touches one line more than its payload (a 64 B block two lines), so the pack moves more lines than "
               "memcpy; the read floor at that offset beside it.", "",
               "| base | payload | block B | ddtkit | MPICH | Open MPI | hand-written | memcpy per block | read alone "
               "| ddtkit +16 B | read alone +16 B |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]

        def blockcopy(per):  # a memcpy call per block (blocks of 8 B and more), in each process
            v = [p["blockcopy"] for p in per.values() if "blockcopy" in p]
            return min(v) if v else None

        def floor(per, m="read"):  # reading the blocks alone, in the process where it was slowest (as ddtkit's worst)
            v = [p[m] for p in per.values() if m in p]
            return min(v) if v else None
        for (base, payload, block), per in sorted(sweep.items(), key=lambda x: (x[0][0], x[0][1], x[0][2])):
            d = min(p["ddtkit"] for p in per.values())
            md.append(f"| {base} | {payload} | {block} | {d:.2f} | {fmt(per.get('MPICH', {}).get('mpi'))} | "
                      f"{fmt(per.get('Open MPI', {}).get('mpi'))} | {fmt(min(p['manual'] for p in per.values()))} | "
                      f"{fmt(blockcopy(per))} | {fmt(floor(per))} | {fmt(floor(per, 'ddtkit+16'))} | "
                      f"{fmt(floor(per, 'read+16'))} |")
        md += ["", "Out of cache, each process times every method once untimed before each timed call (harness.hpp's "
               "settle), so no method pays for the dirty lines of the one before it.", ""]

        def sweep_target(payload, pred, need, text):
            # Each cell's worst process: the one where ddtkit's fraction of memcpy was lowest.
            cells = [(k, min(v, key=lambda l: v[l]["ddtkit"]), v) for k, v in sweep.items() if k[1] == payload and pred(k[2])]
            if not cells:
                return
            worst = min(cells, key=lambda c: c[2][c[1]]["ddtkit"])
            k, proc, per = worst
            d = per[proc]["ddtkit"]
            peers = ", ".join(f"{l} {fmt(per[l].get('mpi'))}" for l in per)
            # The best other loop on that cell in that same process (the MPI's pack, the hand loop,
            # a memcpy per block), timed beside ddtkit sample by sample: what the machine gave any
            # loop there, beside the target (the issue accepts a miss bounded by the machine).
            names = {"mpi": "the MPI's pack", "manual": "the hand loop", "blockcopy": "a memcpy per block"}
            others = {m: v for m, v in per[proc].items() if m in names}
            if others:
                m = max(others, key=others.get)
                peers += f"; in {proc}'s run the best other loop, {names[m]}, {fmt(others[m])} (ddtkit {d / others[m]:.2f}x it)"
            # The bound: reading the blocks alone, in each process (a pack reads them and writes).
            reads = [f"{l} {fmt(p['read'])}" for l, p in worst[2].items() if "read" in p]
            if reads:
                peers += "; reading the blocks alone " + ", ".join(reads)
            # The same cell 16 B past a line, where measured (not the target's cell: one more line a block).
            off = [f"{l} {fmt(p['ddtkit+16'])} (read alone {fmt(p.get('read+16'))})" for l, p in worst[2].items()
                   if "ddtkit+16" in p]
            if off:
                peers += "; at 16 B past a line ddtkit " + ", ".join(off)
            targets.append((text, f"worst {d:.2f} ({k[0]}, {k[2]} B)", peers, d >= need))

        sweep_target("2 MiB", lambda b: b >= 512, 0.9, "Vector sweep in cache: >= 0.9 of memcpy for blocks >= 512 B")
        sweep_target("2 MiB", lambda b: b == 64, 0.8, "Vector sweep in cache: >= 0.8 of memcpy at 64 B")
        sweep_target("2 MiB", lambda b: b == 8, 0.5, "Vector sweep in cache: >= 0.5 of memcpy at 8 B")
        sweep_target("64 MiB", lambda b: b >= 64, 0.9, "Vector sweep out of cache: >= 0.9 of memcpy for blocks >= 64 B")
        # Issue 9: out of cache, at least a memcpy per block on every cell (pack; ratio in each process).
        bc = [(k, l, p["ddtkit"] / p["blockcopy"]) for k, v in sweep.items() for l, p in v.items()
              if p.get("blockcopy") and k[1] == "64 MiB"]
        if bc:
            k, l, r = min(bc, key=lambda x: x[2])
            targets.append(("Vector sweep out of cache: >= 1.0x a memcpy per block on every cell", f"worst {r:.2f}x ({l}, {k[0]} {k[2]} B)",
                            "", r >= 1.0))
        # Issue 9: at least level with both MPIs on every cell (each ratio from its own process).
        vs = [(k, l, p["ddtkit"] / p["mpi"]) for k, v in sweep.items() for l, p in v.items() if p.get("mpi")]
        if vs:
            k, l, r = min(vs, key=lambda x: x[2])
            targets.append(("Vector sweep: >= 1.0x both MPIs on every cell", f"worst {r:.2f}x ({l}, {k[0]} {k[1]} {k[2]} B)",
                            "", r >= 1.0))

    # ---- partial ----------------------------------------------------------------------------------
    part = []
    sizes = {(r["case"], r["params"]): r["bytes"] for rs in rows.values() for r in rs if r["suite"] == "partial"}
    for (suite, case, params, op), m in any_idx.items():
        if suite == "partial":
            n = sizes.get((case, params), 0)
            # A stream no longer than a piece is packed by one call, the same call as the whole
            # pack: its ratio measures only the clock, so it is shown as such and not judged.
            r4 = m["whole"] / m["pieces 4 KiB"] if n > 4096 else None
            r64 = m["whole"] / m["pieces 64 KiB"] if n > 65536 else None
            part.append((case, params, r4, r64))
    if part:
        md += ["## Partial packing", "", "Whole-pack throughput kept when packing in order in pieces (each piece a call "
               "that starts with a seek). MPI's API has no byte-range pack, so there is no MPI peer here. A stream no "
               "longer than the piece is one call identical to the whole pack (shown as 'one call').", "",
               "| case | params | 4 KiB pieces | 64 KiB pieces |", "|---|---|---|---|"]
        for p in sorted(part):
            md.append(f"| {p[0]} | {p[1]} | {'one call' if p[2] is None else f'{p[2]:.2f}'} | "
                      f"{'one call' if p[3] is None else f'{p[3]:.2f}'} |")
        md.append("")
        judged = [p for p in part if p[3] is not None]
        if judged:
            w = min(judged, key=lambda p: p[3])
            targets.append(("Partial packing in 64 KiB pieces: >= 0.9 of whole-pack throughput (streams over 64 KiB)",
                            f"worst {w[3]:.2f} ({w[0]} {w[1]}; {len(judged)} cases)", "", w[3] >= 0.9))

    # ---- portability --------------------------------------------------------------------------------
    port = defaultdict(lambda: defaultdict(dict))  # (layout, params) -> who -> construction -> ns
    for label, t in idx.items():
        for (suite, case, params, op), m in t.items():
            if suite == "portability":
                port[(case, params)]["ddtkit@" + label][op] = m["ddtkit"]
                port[(case, params)][label][op] = m["mpi"]
    # Constructions that share a plan identity (the same layout hash per part) run the same code:
    # the spread of their ddtkit times is the measurement's own, the floor a code change cannot
    # lower. (layout, params) -> construction -> identity.
    plan_id = defaultdict(dict)
    for rs in rows.values():
        for r in rs:
            if r["suite"] == "portability" and r["method"] == "ddtkit" and "plan_id" in r:
                plan_id[(r["case"], r["params"])][r["op"]] = r["plan_id"]

    def same_plan_spread(lp, times):
        groups = defaultdict(list)
        for op, ns in times.items():
            if op in plan_id.get(lp, {}):
                groups[plan_id[lp][op]].append(ns)
        spreads = [max(g) / min(g) for g in groups.values() if len(g) > 1]
        return max(spreads) if spreads else None
    if port:
        md += ["## Performance portability", "", "Max / min pack time across the constructions of one layout "
               "(1.00 = every construction equally fast). ddtkit is timed in both processes; the Open MPI process "
               "shares the 2 cores with Open MPI's runtime threads, so its ddtkit column is the noisier one, and "
               "the target is judged on the quieter (MPICH) process, with the other shown beside it. `same plan`: "
               "the largest max / min among constructions whose parts have the same layout hash, so the same plan "
               "and kernels, in either run: what the measurement alone spreads by.", "",
               "| layout | params | ddtkit (MPICH run) | ddtkit (Open MPI run) | same plan | plans | MPICH | Open MPI | "
               "slowest ddtkit construction |",
               "|---|---|---|---|---|---|---|---|---|"]
        worst = (0, None)
        for (layout, params), who in sorted(port.items()):
            ratio = {w: max(v.values()) / min(v.values()) for w, v in who.items()}
            quiet = ratio.get("ddtkit@MPICH", ratio.get("ddtkit@Open MPI"))
            slow = max(who.get("ddtkit@MPICH", next(iter(who.values()))).items(), key=lambda kv: kv[1])[0]
            floor = [x for x in (same_plan_spread((layout, params), v) for w, v in who.items() if w.startswith("ddtkit@"))
                     if x is not None]
            nplans = len(set(plan_id.get((layout, params), {}).values()))
            md.append(f"| {layout} | {params} | {fmt(ratio.get('ddtkit@MPICH'))} | {fmt(ratio.get('ddtkit@Open MPI'))} | "
                      f"{fmt(max(floor) if floor else None)} | {nplans or ''} | "
                      f"{fmt(ratio.get('MPICH'))} | {fmt(ratio.get('Open MPI'))} | {slow} |")
            if quiet > worst[0]:
                worst = (quiet, (layout, params, ratio))
        md.append("")
        if worst[1]:
            l, p, r = worst[1]
            targets.append(("Portability: max/min across constructions <= 1.10 (MPICH-run timing)", f"worst {worst[0]:.2f} ({l} {p}); "
                            f"Open MPI run: {fmt(r.get('ddtkit@Open MPI'))}",
                            ", ".join(f"{k} {fmt(v)}" for k, v in r.items() if not k.startswith("ddtkit")), worst[0] <= 1.10))
        # Issue 9: in both processes' runs.
        both = [(max(v.values()) / min(v.values()), lp, w) for lp, who in port.items() for w, v in who.items()
                if w.startswith("ddtkit@")]
        if both:
            r, (l, p), w = max(both, key=lambda x: x[0])
            fl = same_plan_spread((l, p), port[(l, p)][w])
            targets.append(("Portability: max/min <= 1.10 in both processes' runs", f"worst {r:.2f} ({l} {p}, {w[7:]} run)"
                            + (f"; constructions of one plan there spread {fl:.2f}" if fl else ""), "", r <= 1.10))

    # ---- commit ---------------------------------------------------------------------------------------
    com = []
    for label, rs in rows.items():
        for r in rs:
            if r["suite"] == "commit" and r["method"] == "ddtkit":
                com.append((r["case"], r["params"], r["ns"] / 1e3, r.get("index_entries", 0), label))
    if com:
        best = {}
        for c in com:  # the lower of the two runs' medians (the same ddtkit code, two processes)
            k = (c[0], c[1])
            if k not in best or c[2] < best[k][2]:
                best[k] = c
        md += ["## Commit cost", "", "Create + commit + free, median microseconds. Budget: 5 us + 20 ns per index-list entry.",
               "", "| kernel | params | ddtkit us | MPICH us | Open MPI us | index entries | within budget |",
               "|---|---|---|---|---|---|---|"]
        fails = 0
        for (case, params), c in sorted(best.items()):
            peers = {l: t.get(("commit", case, params, "create+commit+free"), {}).get("mpi") for l, t in idx.items()}
            budget = 5 + 0.02 * c[3]
            ok = c[2] <= budget
            fails += not ok
            md.append(f"| {case} | {params} | {c[2]:.2f} | {fmt(peers.get('MPICH') and peers['MPICH'] / 1e3)} | "
                      f"{fmt(peers.get('Open MPI') and peers['Open MPI'] / 1e3)} | {c[3]} | {'yes' if ok else 'NO'} |")
        md.append("")
        targets.append(("Commit: median create+commit < 5 us + 20 ns per index entry, every DDTBench type",
                        f"{len(best) - fails} of {len(best)} within", "", fails == 0))

    inter = interposer(md, targets)
    runtime = report_runtime.section(md, targets, OUT)
    spin = report_spin.section(md, targets, OUT)
    protocols = report_protocols.section(md, targets, OUT)
    gpu = report_gpu.section(md, targets, OUT)

    summary = ["## Summary: the targets of the engine (issue 9), the runtime (issue 10), the interposer (issues 4 and 11), "
               "the GPU layer (issue 12), the NIC model (issue 14) and the protocols (issue 15)", "",
               "| target | measured | peers | met |",
               "|---|---|---|---|"]
    summary += [f"| {t} | {m} | {p} | {'—' if ok is None else 'yes' if ok else '**NO**'} |" for t, m, p, ok in targets]
    md[6:6] = summary + [""]
    with open(os.path.join(OUT, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plots(sweep, kernels, port)
    plot_interposer(inter)
    report_runtime.plots(OUT, runtime)
    report_spin.plots(OUT, spin)
    report_protocols.plots(OUT, protocols)
    report_gpu.plots(OUT, gpu)
    print("\n".join(summary))
    print(f"\nreport: {os.path.join(OUT, 'report.md')}")


def interposer(md, targets):
    """The DDTBench ping-pong and the OSU vector latency under the interposer (issues 4 and 11): for each
    MPI, its own path (PMPI) and the intercepted one (MPI) interleaved in one process."""
    data = {}
    for label, name in (("MPICH", "interposer_mpich.jsonl"), ("Open MPI", "interposer_openmpi.jsonl")):
        path = os.path.join(OUT, name)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        if rows:
            data[label] = (rows[0]["mpi"], index(rows))
    if not data:
        return data
    md += ["## MPI interposer: DDTBench ping-pong, native vs under libddtkit-mpi.so", "",
           "Round trip as rank 0 sees it (spec §2.2), median microseconds; 2 ranks on this node. In each MPI's "
           "run the MPI's own path (PMPI_Send/Recv, PMPI_Alltoall for FFT2D) and the intercepted one (MPI_Send/Recv) "
           "are interleaved in one process. Speedup = native / interposed. `manual` is the application's "
           "hand-written loop around a byte ping-pong.", ""]
    for label, (ver, t) in data.items():
        rowsk = [(k[1], k[2], v) for k, v in t.items() if k[0] == "pingpong"]
        sp = [v["native"] / v["interposed"] for _, _, v in rowsk]
        md += [f"### {ver}", "", "| kernel | params | native us | interposed us | speedup | manual us |", "|---|---|---|---|---|---|"]
        md += [f"| {c} | {p} | {v['native'] / 1e3:.2f} | {v['interposed'] / 1e3:.2f} | {v['native'] / v['interposed']:.2f}x | "
               f"{v['manual'] / 1e3:.2f} |" for c, p, v in rowsk]
        worst = min(zip(sp, rowsk), key=lambda z: z[0]) if sp else (float("nan"), ("", "", {}))
        md += ["", f"Geometric mean speedup {gmean(sp):.2f}x over {len(sp)} kernels; worst {worst[0]:.2f}x "
               f"({worst[1][0]} {worst[1][1]}).", ""]
        osu = sorted(((int(k[2]), v) for k, v in t.items() if k[0] == "osu_latency_vect"), key=lambda z: z[0])
        if osu:
            # Launches of the same 2-rank job on this shared machine run in one of two modes, every
            # message between the ranks about 2x slower in one (src/mpi/local.cpp's native_pipeline
            # measurement), and rules measured in one mode can lose in the other: the report names
            # this launch's floor so that runs can be compared.
            probe = [t.get(("line_probe", "ranks 0 and 1", w, "one way"), {}).get("line") for w in ("start", "end")]
            dist = (f" A cache line written by one rank and read by the other took {probe[0]:.0f} ns one way at the "
                    f"start of this run and {probe[1]:.0f} ns at its end (bench/line_probe.hpp): about 30 ns where the "
                    "host has put this machine's two vCPUs on cores that share caches, about 160 ns where they sit on "
                    "different dies, and the figures between the ranks move with it (not the only cause: this run's "
                    "floor is read beside it)." if all(probe) else "")
            md += [f"This launch's floor ({ver}): a 4-byte message (`vect:8:4` of size 8, one block) took "
                   f"{osu[0][1]['native'] / 1e3:.2f} us one way natively. Launches on this machine differ by up to about "
                   "2x in it, and with it every figure between the ranks; compare runs in the same mode." + dist, ""]
            md += [f"OSU latency, `-D vect:8:4` on MPI_CHAR ({ver}), microseconds:", "",
                   "| size | native | interposed | speedup |", "|---|---|---|---|"]
            md += [f"| {sz} | {v['native'] / 1e3:.2f} | {v['interposed'] / 1e3:.2f} | {v['native'] / v['interposed']:.2f}x |"
                   for sz, v in osu]
            md.append("")
        if sp:
            targets.append((f"Interposer, {label}: DDTBench ping-pong geomean >= 2x vs native", f"{gmean(sp):.2f}x", "",
                            gmean(sp) >= 2))
            targets.append((f"Interposer, {label}: no DDTBench kernel below 0.95x native",
                            f"worst {worst[0]:.2f}x ({worst[1][0]} {worst[1][1]}); {sum(x < 0.95 for x in sp)} below",
                            "", worst[0] >= 0.95))
        if osu:
            big = [v["native"] / v["interposed"] for sz, v in osu if sz >= 4096]
            small = [v["native"] / v["interposed"] for sz, v in osu if sz < 4096]
            if big:
                targets.append((f"Interposer, {label}: OSU vect:8:4 >= 2x native from 4 KiB", f"min {min(big):.2f}x", "",
                                min(big) >= 2))
            if small:
                targets.append((f"Interposer, {label}: OSU vect:8:4 not slower below 4 KiB (>= 0.95x)",
                                f"min {min(small):.2f}x", "", min(small) >= 0.95))
        grid = [(k[1], k[2], v) for k, v in t.items() if k[0] == "eager_grid"]
        if grid:
            sizes = sorted({int(p.split(" B,")[0]) for _, p, _ in grid})
            rows = {}
            for c, p, v in grid:
                msg, blk = int(p.split(" B,")[0]), int(p.split(", ")[1].split(" B")[0])
                rows.setdefault((c, blk), {})[msg] = v
            md += [f"Small vectors ({ver}): vector types of stride twice the block, one element, round trip natively "
                   "typed (PMPI), natively as bytes staged by MPI_Pack / MPI_Unpack on each side, and through the "
                   "interposer; each cell is native / interposed, and native / staged in brackets (above 1: that way "
                   "is faster than the MPI's typed path). The measurement behind Open MPI's small-message pass rule "
                   "(src/mpi/pass.cpp: ompi_slow_eager).", "",
                   "| elements | block B | " + " | ".join(f"{m} B" for m in sizes) + " |",
                   "|---|---|" + "---|" * len(sizes)]
            order = {"vector char": 0, "vector short": 1, "vector int": 2, "vector float": 3, "vector double": 4}
            for (c, blk), cells in sorted(rows.items(), key=lambda z: (order.get(z[0][0], 9), z[0][1])):
                md.append(f"| {c.split()[-1]} | {blk} | " + " | ".join(
                    f"{cells[m]['native'] / cells[m]['interposed']:.2f} ({cells[m]['native'] / cells[m]['native staged']:.2f})"
                    if m in cells else "" for m in sizes) + " |")
            md.append("")
        pre = sorted(((int(k[2]), v) for k, v in t.items() if k[0] == "predefined"), key=lambda z: z[0])
        if pre:
            md += [f"MPI_BYTE ping-pong ({ver}): messages of predefined types go to the MPI as they are; the interposer's "
                   "cost is its checks. Round trip, median microseconds:", "",
                   "| bytes | native | interposed | native / interposed |", "|---|---|---|---|"]
            md += [f"| {sz} | {v['native'] / 1e3:.3f} | {v['interposed'] / 1e3:.3f} | {v['native'] / v['interposed']:.3f} |"
                   for sz, v in pre]
            md.append("")
            for sz, v in pre:
                r = v["native"] / v["interposed"]
                targets.append((f"Interposer, {label}: {sz}-byte MPI_BYTE ping-pong within 3% of native", f"{r:.3f}", "",
                                r >= 0.97))
        cp = sorted(((k[1], int(k[2])), v) for k, v in t.items() if k[0] == "coll_predefined")
        if cp:
            md += [f"Collectives of MPI_DOUBLE ({ver}), 2 ranks: from DDTKIT_RUNTIME_COLL_MIN (1 MiB a chunk; "
                   "MPI_Bcast from DDTKIT_RUNTIME_BCAST_MIN, 256 KiB) they take ddtkit's runtime whatever the types; "
                   "median microseconds per call:", "",
                   "| collective | bytes a chunk | native | interposed | native / interposed |", "|---|---|---|---|---|"]
            md += [f"| {c} | {b} | {v['native'] / 1e3:.2f} | {v['interposed'] / 1e3:.2f} | {v['native'] / v['interposed']:.2f} |"
                   for (c, b), v in cp]
            md.append("")
        first = [(k[1], k[2], v) for k, v in t.items() if k[0] == "first_transfer"]
        if first:
            md += [f"First transfer vs steady state ({ver}): per kernel a type committed afresh, its commit, its first "
                   "round trip timed alone, and the median of the next 15 round trips, microseconds (one sample each "
                   "for commit and first). The interposer's commit translates the type; its first runtime message "
                   "sends the layout, which later ones find memoized.", "",
                   "| kernel | params | native commit | native first | native steady | interposed commit | "
                   "interposed first | interposed steady | interposed first / steady |",
                   "|---|---|---|---|---|---|---|---|---|"]
            md += [f"| {c} | {p} | {v['native_commit'] / 1e3:.2f} | {v['native_first'] / 1e3:.2f} | "
                   f"{v['native_steady'] / 1e3:.2f} | {v['interposed_commit'] / 1e3:.2f} | "
                   f"{v['interposed_first'] / 1e3:.2f} | {v['interposed_steady'] / 1e3:.2f} | "
                   f"{v['interposed_first'] / v['interposed_steady']:.1f}x |" for c, p, v in first]
            fr = [v["interposed_first"] / v["interposed_steady"] for _, _, v in first]
            nr = [v["native_first"] / v["native_steady"] for _, _, v in first]
            md += ["", f"First / steady, geometric mean over {len(first)} kernels: interposed {gmean(fr):.1f}x, "
                   f"native {gmean(nr):.1f}x.", ""]
    return data


def plot_interposer(data):
    if not data:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    names = sorted({k[1] for _, t in data.values() for k in t if k[0] == "pingpong"})
    w = 0.4
    for i, (label, (ver, t)) in enumerate(data.items()):
        ys = [gmean([v["native"] / v["interposed"] for k, v in t.items() if k[0] == "pingpong" and k[1] == n]) for n in names]
        ax.bar([x + (i - 0.5) * w for x in range(len(names))], ys, w, label=ver)
        osu = sorted(((int(k[2]), v) for k, v in t.items() if k[0] == "osu_latency_vect"), key=lambda z: z[0])
        bx.plot([z for z, _ in osu], [v["native"] / v["interposed"] for _, v in osu], marker="o", label=ver)
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.axhline(2.0, color="red", lw=0.8, ls="--", label="target 2x (geomean)")
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("ping-pong speedup under the interposer")
    ax.legend(fontsize=8)
    bx.set_xscale("log", base=2)
    bx.axhline(1.0, color="gray", lw=0.8)
    bx.set_xlabel("osu_latency -D vect:8:4 size (bytes)")
    bx.set_ylabel("latency speedup")
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "interposer_speedup.png"), dpi=110)
    plt.close(fig)


def plots(sweep, kernels, port):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plots")
        return
    for payload, name in (("2 MiB", "sweep_in_cache.png"), ("64 MiB", "sweep_out_of_cache.png")):
        bases = sorted({k[0] for k in sweep if k[1] == payload})
        if not bases:
            continue
        fig, axes = plt.subplots(1, len(bases), figsize=(5 * len(bases), 4), sharey=True)
        axes = axes if len(bases) > 1 else [axes]
        for ax, base in zip(axes, bases):
            keys = sorted(k for k in sweep if k[0] == base and k[1] == payload)
            xs = [k[2] for k in keys]
            series = {"ddtkit": [min(p["ddtkit"] for p in sweep[k].values()) for k in keys],
                      "hand-written": [min(p["manual"] for p in sweep[k].values()) for k in keys]}
            for label in ("MPICH", "Open MPI"):
                series[label] = [sweep[k].get(label, {}).get("mpi", float("nan")) for k in keys]
            for label, ys in series.items():
                ax.plot(xs, ys, marker="o", label=label)
            ax.axhline(1.0, color="gray", lw=0.8, ls="--")
            ax.set_xscale("log", base=2)
            ax.set_title(f"vector of {base}, {payload} payload")
            ax.set_xlabel("block bytes (stride 2 x block)")
        axes[0].set_ylabel("throughput / memcpy")
        axes[0].legend()
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, name), dpi=110)
        plt.close(fig)
    if kernels:
        names = sorted({k for k, op in kernels if op == "pack"})
        fig, ax = plt.subplots(figsize=(12, 4.5))
        w = 0.2
        for i, (label, op) in enumerate((("MPICH", "pack"), ("Open MPI", "pack"), ("MPICH", "unpack"), ("Open MPI", "unpack"))):
            ys = [gmean(kernels[(n, op)].get(label, [])) for n in names]
            ax.bar([x + (i - 1.5) * w for x in range(len(names))], ys, w, label=f"{op} vs {label}")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel("speedup of ddtkit (geomean over sets)")
        ax.legend(ncol=4, fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "ddtbench_speedup.png"), dpi=110)
        plt.close(fig)
    if port:
        keys = sorted(port)
        fig, ax = plt.subplots(figsize=(12, 4))
        whos = ["ddtkit", "MPICH", "Open MPI"]
        for i, who in enumerate(whos):
            ys = []
            for k in keys:
                vals = [v for w, v in port[k].items() if (w.startswith("ddtkit") if who == "ddtkit" else w == who)]
                ys.append(max(max(v.values()) / min(v.values()) for v in vals) if vals else float("nan"))
            ax.bar([x + (i - 1) * 0.27 for x in range(len(keys))], ys, 0.27, label=who)
        ax.axhline(1.10, color="red", lw=0.8, ls="--", label="target 1.10")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f"{l}\n{p}" for l, p in keys], fontsize=7)
        ax.set_ylabel("max / min time across constructions")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "portability.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
