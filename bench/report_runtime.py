"""The report's "Runtime (issue 10)" section: ddtkit's intra-node runtime beside MPICH and Open MPI.

Inputs (bench/results):
  runtime.jsonl              ddtkit (bench/runtime_bench.cpp): rt_cost, rt_vector, rt_pingpong, rt_stencil
  runtime_<mpi>.jsonl        each MPI on the same exchanges (bench/runtime_mpi.cpp): rt_vector, rt_stencil,
                             and rt_pingpong: the DDTBench kernels through the MPI (mpi-ddt, mpi-hand) and
                             through ddtkit's runtime (ddtkit) interleaved in the same two processes
  interposer_<mpi>.jsonl     the DDTBench ping-pong through each MPI (ddtbench_mpi): methods native, manual
                             (used only where runtime_<mpi>.jsonl has no rt_pingpong)

The MPI runs are separate processes in the same `make bench`, on the same machine, one after another;
the DDTBench ratios are taken within each MPI's run (ddtkit's runtime beside it), not across runs.
"""
import json
import math
import os
from collections import defaultdict

SIDES = (("ddtkit", "runtime.jsonl"), ("MPICH", "runtime_mpich.jsonl"), ("Open MPI", "runtime_openmpi.jsonl"))
MPIS = ("MPICH", "Open MPI")
CONFIGS = ("pipe", "cma", "heap-naive", "heap-pipelined", "heap-descriptor", "heap-memoized", "heap-memoized-rget", "auto")
ZERO_COPY = ("heap-naive", "heap-pipelined", "heap-descriptor", "heap-memoized", "heap-memoized-rget")
# Within 10% counts as noise on these shared 2-core machines (as in report.py).
NOISE = 0.90


def distance(data, part):
    """The cache-line distance between ranks 0 and 1 around one part of each run (rt_meta's line_ns,
    bench/line_probe.hpp), e.g. "cache line between the ranks, ns before / after the part: MPICH
    run 160 / 158, Open MPI run 30 / 31": the figures of a part are read at that distance."""
    runs = [f"{side} run {v[0]:.0f} / {v[1]:.0f}" for side, (_, rows) in data.items() for r in rows
            if r["suite"] == "rt_meta" and r["case"] == part and (v := r.get("line_ns")) and v[0]]
    return ("cache line between the ranks, ns before / after the part: " + ", ".join(runs)) if runs else ""


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt(x, spec=".2f"):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def load(out):
    """side -> (version, rows); the DDTBench ping-pong of each MPI from its interposer run."""
    data = {}
    for side, name in SIDES:
        path = os.path.join(out, name)
        if os.path.exists(path):
            with open(path) as f:
                rows = [json.loads(line) for line in f if line.strip()]
            if rows:
                data[side] = (rows[0]["mpi"], rows)
    pp = {}
    for side, name in (("MPICH", "interposer_mpich.jsonl"), ("Open MPI", "interposer_openmpi.jsonl")):
        path = os.path.join(out, name)
        if os.path.exists(path):
            with open(path) as f:
                for r in (json.loads(line) for line in f if line.strip()):
                    if r["suite"] == "pingpong":
                        pp.setdefault(side, {})[(r["case"], r["params"], r["method"])] = r["ns"]
    return data, pp


def vector_table(data):
    """metric -> block -> who -> row, who being a ddtkit config or 'MPICH' / 'Open MPI' (datatype
    path) or 'MPICH hand' / 'Open MPI hand'."""
    v = defaultdict(lambda: defaultdict(dict))
    for side, (_, rows) in data.items():
        for r in rows:
            if r["suite"] != "rt_vector":
                continue
            v[r["case"]][int(r["params"])][who_of(side, r["method"])] = r
    return v


def who_of(side, method):
    """A record's column: ddtkit's own run by method; in an MPI's run, 'MPICH' / 'Open MPI' (its datatype
    path), '<MPI> hand', or '<MPI> ddtkit' (ddtkit's runtime timed beside it in that run, runtime_mpi.cpp)."""
    if side == "ddtkit":
        return method
    if method == "mpi-hand":
        return side + " hand"
    if method.startswith("ddtkit"):
        return side + " ddtkit"
    return side


def same_run_ratio(c, key):
    """max over the MPIs of (ddtkit beside that MPI) / (that MPI), from the cells c of one row; None when no
    MPI's run timed ddtkit beside it."""
    rs = [key(c[m + " ddtkit"]) / key(c[m]) for m in MPIS if m in c and m + " ddtkit" in c]
    return max(rs) if rs else None


def faster(cells, names, key):
    vals = [key(cells[n]) for n in names if n in cells]
    return min(vals) if vals else None


def size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"


def section(md, targets, out):
    data, pp = load(out)
    if "ddtkit" not in data:
        return None
    md += ["## Runtime (issue 10): ddtkit's intra-node runtime beside MPICH and Open MPI", "",
           "Two processes of this node (the stencil: 2 to 8), ddtkit under `ddtkit run`, each MPI under its own "
           "`mpiexec` with its default shared-memory path, one after another in the same `make bench`; both sides build "
           "the same types and sizes (bench/vector_sweep.hpp, bench/stencil.hpp). Every buffer of ddtkit's runs comes "
           "from `ddt_alloc` (the mapped heap); each configuration's received bytes are checked once before it is "
           "timed. Medians of repeated samples; " + ", ".join(f"{s}: {v}" for s, (v, _) in data.items()) + ".", ""]
    usage = [(side, r["case"], r["np"], r["foreign_share"], r["ns"] / 1e9, r.get("line_ns"))
             for side, (_, rows) in data.items() for r in rows if r["suite"] == "rt_meta"]
    if usage:
        def line(v):  # bench/line_probe.hpp; absent from runs older than it, 0 where not probed (P > 2)
            return "—" if not v or not v[0] else f"{v[0]:.0f} / {v[1]:.0f}"
        md += ["Share of the machine that other processes took while each part ran (its busy time in /proc/stat "
               "less the job's own CPU time): above 10% the part's figures are disturbed. `line ns`: the one-way time "
               "of a cache line written by rank 0 and read by rank 1 and back, just before / just after the part "
               "(bench/line_probe.hpp). This machine's two vCPUs are placed by the host, which moves them while a "
               "job runs: from about 30 ns where their cores share caches to about 160 ns where they sit on different "
               "dies. Every transfer between the ranks pays it per line it moves, and not every design alike (a "
               "one-copy design reading the peer's lines one per element pays it per element), so compare figures "
               "measured at the same distance.", "",
               "| run | part | processes | seconds | other processes | line ns |", "|---|---|---|---|---|---|"]
        md += [f"| {s} | {c} | {n} | {sec:.1f} | {100 * f:.1f}%{' **disturbed**' if f > 0.1 else ''} | {line(ln)} |"
               for s, c, n, f, sec, ln in usage]
        md.append("")
    vec = vector_table(data)
    lat = vec.get("latency", {})
    if lat:
        md += ["### Vector sweep: latency", "",
               "2 MiB payload in blocks of the given size, stride 2 x block; half a round trip, microseconds. "
               "`hand` is the hand-written loops around contiguous messages over the faster MPI for that size; "
               "ratio = heap-memoized / faster MPI's datatype path (lower is better), taken within each MPI's run "
               "where that run timed ddtkit's memoized heap beside it (`beside`: MPICH's run / Open MPI's; the larger "
               "of the two ratios), else across runs. `one core`: the same copy "
               "(ddt_copy, vector into vector) in one process, and `memcpy` of the 2 MiB payload: the floor of a "
               "copy that one core makes.", "",
               "| block | " + " | ".join(CONFIGS) + " | MPICH | Open MPI | beside | hand | one core | memcpy | ratio |",
               "|---|" + "---|" * (len(CONFIGS) + 7)]
        bound = vec.get("bound", {})
        worst_small, worst_all = None, None
        for b in sorted(lat):
            c = lat[b]
            fm = faster(c, MPIS, lambda r: r["ns"])
            hand = faster(c, ("MPICH hand", "Open MPI hand"), lambda r: r["ns"])
            mem = c.get("heap-memoized", {}).get("ns")
            ratio = same_run_ratio(c, lambda r: r["ns"])
            if ratio is None:
                ratio = mem / fm if mem and fm else None
            beside = " / ".join(fmt(c[m + " ddtkit"]["ns"] / 1e3) if m + " ddtkit" in c else "n/a" for m in MPIS)
            md.append(f"| {size(b)} | " + " | ".join(fmt(c[k]["ns"] / 1e3) if k in c else "n/a" for k in CONFIGS)
                      + f" | {fmt(c['MPICH']['ns'] / 1e3) if 'MPICH' in c else 'n/a'} | "
                      f"{fmt(c['Open MPI']['ns'] / 1e3) if 'Open MPI' in c else 'n/a'} | {beside} | {fmt(hand and hand / 1e3)} | "
                      + " | ".join(fmt(bound[b][w]["ns"] / 1e3) if w in bound.get(b, {}) else "n/a"
                                   for w in ("one-core ddt_copy", "memcpy")) + f" | {fmt(ratio)} |")
            if ratio is not None:
                if b <= 16 << 10 and (worst_small is None or ratio > worst_small[0]):
                    worst_small = (ratio, b)
                if worst_all is None or ratio > worst_all[0]:
                    worst_all = (ratio, b)
        md.append("")
        if worst_small:
            targets.append(("Runtime: memoized zero-copy latency <= 0.5x the faster MPI, blocks 128 B - 16 KiB",
                            f"worst {worst_small[0]:.2f}x ({size(worst_small[1])})", distance(data, "vector sweep"),
                            worst_small[0] <= 0.5))
        if worst_all:
            targets.append((f"Runtime: memoized zero-copy latency never slower than the faster MPI (beyond noise, <= {1 / NOISE:.2f}x)",
                            f"worst {worst_all[0]:.2f}x ({size(worst_all[1])})", "", worst_all[0] <= 1 / NOISE))
    for metric, title in (("bw", "unidirectional bandwidth"), ("bibw", "bidirectional bandwidth")):
        t = vec.get(metric, {})
        if not t:
            continue
        md += [f"### Vector sweep: {title}", "",
               f"GB/s of payload ({'both directions' if metric == 'bibw' else 'one direction'}), a window of "
               f"{next(iter(next(iter(t.values())).values())).get('window', 16)} messages per iteration (osu_{metric} style).", "",
               "| block | " + " | ".join(CONFIGS) + " | MPICH | Open MPI | hand |", "|---|" + "---|" * (len(CONFIGS) + 3)]
        for b in sorted(t):
            c = t[b]
            hand = max([c[h]["gbs"] for h in ("MPICH hand", "Open MPI hand") if h in c], default=None)
            md.append(f"| {size(b)} | " + " | ".join(fmt(c[k]["gbs"]) if k in c else "n/a" for k in CONFIGS)
                      + f" | {fmt(c.get('MPICH', {}).get('gbs'))} | {fmt(c.get('Open MPI', {}).get('gbs'))} | {fmt(hand)} |")
        md.append("")
    bw, bibw = vec.get("bw", {}), vec.get("bibw", {})
    if bw and bibw:
        # Beside them, a reference (not a ceiling): the same local copy on both cores at once
        # against one core alone (runtime_bench.cpp's two_cores).
        two = {b: r["two cores"]["ratio"] for b, r in vec.get("bound", {}).items() if "ratio" in r.get("two cores", {})}
        md += ["Bidirectional / unidirectional bandwidth; `two cores`: the same copy (ddt_copy) made by both ranks "
               "at once, their bytes per second over rank 0's alone (both directions' receivers copy at the same "
               "time, so it is read beside the ratio; it is a reference, not a ceiling: the transfers have beaten it).", "",
               "| block | " + " | ".join(ZERO_COPY) + " | MPICH | Open MPI | two cores |",
               "|---|" + "---|" * (len(ZERO_COPY) + 3)]
        # Judged twice: the one-copy design alone (memoized heap, static RGET: each message is
        # copied by its receiver, as in FALCON-X), and the exchange designs under HYBRID, the
        # default, whose unidirectional stream already copies on both processes' cores (COOP-load
        # splits each message), so that a second direction finds no idle core of the job: the
        # uni-directional gain of HYBRID over RGET is shown as that bound's measurement.
        worst, worst_rget, coop_gain = None, None, []
        for b in sorted(set(bw) & set(bibw)):
            ratios = {k: bibw[b][k]["gbs"] / bw[b][k]["gbs"] for k in list(ZERO_COPY) + list(MPIS) if k in bw[b] and k in bibw[b]}
            md.append(f"| {size(b)} | " + " | ".join(fmt(ratios.get(k)) for k in list(ZERO_COPY) + list(MPIS))
                      + f" | {fmt(two.get(b))} |")
            for k in ZERO_COPY:
                if k not in ratios:
                    continue
                if k == "heap-memoized-rget":
                    if worst_rget is None or ratios[k] < worst_rget[0]:
                        worst_rget = (ratios[k], k, b)
                elif worst is None or ratios[k] < worst[0]:
                    worst = (ratios[k], k, b)
            if "heap-memoized" in bw[b] and "heap-memoized-rget" in bw[b]:
                coop_gain.append(bw[b]["heap-memoized"]["gbs"] / bw[b]["heap-memoized-rget"]["gbs"])
        md.append("")
        if worst_rget:
            b = worst_rget[2]
            tc = vec.get("bound", {}).get(b, {}).get("two cores", {})
            bound = ""
            if "gbs" in tc and "heap-memoized-rget" in bibw[b]:
                bi = bibw[b]["heap-memoized-rget"]["gbs"]
                bound = (f"reference (not a ceiling: the transfers can beat it): the same local copy made on both cores "
                         f"at once moved {tc['gbs']:.1f} GB/s "
                         f"({tc['ratio']:.2f}x one core's {tc['one_gbs']:.1f}); bidirectional {bi:.1f} GB/s is "
                         f"{bi / tc['gbs']:.2f} of it")
            targets.append(("Runtime: bidirectional >= 1.8x unidirectional bandwidth, one-copy zero-copy design (memoized, RGET)",
                            f"worst {worst_rget[0]:.2f}x ({size(b)})", "; ".join(x for x in (bound, distance(data, "vector sweep")) if x),
                            worst_rget[0] >= 1.8))
        if worst:
            bound = (f"bound: HYBRID's one direction already copies on both cores (its unidirectional bandwidth "
                     f"{min(coop_gain):.2f}-{max(coop_gain):.2f}x RGET's)") if coop_gain else ""
            targets.append(("Runtime: bidirectional >= 1.8x unidirectional bandwidth, zero-copy designs under HYBRID",
                            f"worst {worst[0]:.2f}x ({worst[1]}, {size(worst[2])})", bound, worst[0] >= 1.8))

    pingpong = ddtbench(md, targets, data, pp, raw_pingpong(out))
    stencil = stencil_section(md, targets, data)
    cost = cost_section(md, targets, data)
    return {"vec": vec, "pingpong": pingpong, "stencil": stencil, "cost": cost}


def raw_pingpong(out):
    """[(bytes, ns)] of bench/raw_pingpong.cpp's run (raw.jsonl), or []."""
    path = os.path.join(out, "raw.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(r["bytes"], r["ns"]) for r in (json.loads(line) for line in f if line.strip()) if r["suite"] == "rt_raw"]


def ddtbench(md, targets, data, pp, raw):
    forced = {(r["case"], r["params"], r["method"]): r["ns"] for r in data["ddtkit"][1] if r["suite"] == "rt_pingpong"}
    rows = [r for r in data["ddtkit"][1] if r["suite"] == "rt_pingpong" and r["method"] == "ddtkit"]
    if not rows:
        return []
    # Same-run figures: each MPI's run timed ddtkit's runtime beside it (runtime_mpi.cpp).
    same = {m: {(r["case"], r["params"], r["method"]): r["ns"] for r in data[m][1] if r["suite"] == "rt_pingpong"}
            for m in MPIS if m in data}
    same = {m: v for m, v in same.items() if v}
    if same:
        md += ["### DDTBench ping-pong", "",
               "Round trip as rank 0 sees it (spec §2.2; FFT2D: two all-to-all transposes), microseconds. Each MPI's run "
               "(runtime_mpi) started ddtkit's runtime through that MPI and timed, kernel by kernel and sample by sample in "
               "turn, the MPI's own datatype path, ddtkit's runtime (default configuration, arrays in the mapped heap) and "
               "the application's hand-written loops around a byte ping-pong over the MPI: `beside` is ddtkit in that run. "
               "Speedups are taken within a run (MPI / ddtkit beside it); against the faster MPI and against hand-packing "
               "the smaller of the two runs' ratios. `ddtkit`, `pipe`, `heap` and `coop`: ddt_runtime_bench's own run (not "
               "judged; pipe and heap force that mechanism, coop the COOP-p2p protocol at every size, to show where the "
               "default's choices cost). `contiguous`: in the same runs, the runtime moving the kernel's bytes as one "
               "contiguous run of the heap (each run's figure, MPICH's / Open MPI's): the transport's cost for these bytes "
               "without a layout; `at contiguous` is the faster MPI over it (the smaller of the two runs'), the speedup "
               "ddtkit would reach if its layouts cost no more than contiguous bytes.", "",
               "| kernel | params | bytes | ddtkit | pipe | heap | coop | MPICH | beside MPICH | Open MPI | beside Open MPI | "
               "hand (faster MPI) | contiguous | vs faster MPI | at contiguous | vs hand |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    else:
        md += ["### DDTBench ping-pong", "",
               "Round trip as rank 0 sees it (spec §2.2; FFT2D: two all-to-all transposes), microseconds. ddtkit: its runtime "
               "in the default configuration, the kernels' arrays in the mapped heap. MPI: its own datatype path (PMPI, "
               "from ddtbench_mpi's run) and the application's hand-written loops around a byte ping-pong over it. "
               "Speedup = MPI / ddtkit. `pipe` and `heap`: ddtkit with that mechanism forced, `coop` with COOP-p2p "
               "at every size (not judged), to show where the default's choices cost.", "",
               "| kernel | params | bytes | ddtkit | pipe | heap | coop | MPICH | Open MPI | hand (faster MPI) | vs faster MPI | vs hand |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    out = []
    for r in rows:
        k = (r["case"], r["params"])
        pipe, heap = forced.get(k + ("ddtkit-pipe",)), forced.get(k + ("ddtkit-heap",))
        coop = forced.get(k + ("ddtkit-coop",))
        if same:
            nat = {m: v[k + ("mpi-ddt",)] for m, v in same.items() if k + ("mpi-ddt",) in v}
            mine = {m: v[k + ("ddtkit",)] for m, v in same.items() if k + ("ddtkit",) in v}
            man = {m: v[k + ("mpi-hand",)] for m, v in same.items() if k + ("mpi-hand",) in v}
            contig = {m: v[k + ("ddtkit-bytes",)] for m, v in same.items() if k + ("ddtkit-bytes",) in v}
            sps = [nat[m] / mine[m] for m in nat if m in mine]
            shs = [man[m] / mine[m] for m in man if m in mine]
            sbs = [nat[m] / contig[m] for m in nat if m in contig]
            sp, sh = (min(sps) if sps else None), (min(shs) if shs else None)
            sb = min(sbs) if sbs else None
            hand = min(man.values()) if man else None
            out.append((r["case"], r["params"], r["ns"], sp, sh, sb))
            cell = lambda d, m: fmt(d.get(m) and d[m] / 1e3)
            both = " / ".join(cell(contig, m) for m in MPIS if m in contig) or "n/a"
            md.append(f"| {r['case']} | {r['params']} | {r['bytes']} | {r['ns'] / 1e3:.2f} | {fmt(pipe and pipe / 1e3)} | "
                      f"{fmt(heap and heap / 1e3)} | {fmt(coop and coop / 1e3)} | {cell(nat, 'MPICH')} | {cell(mine, 'MPICH')} | {cell(nat, 'Open MPI')} | "
                      f"{cell(mine, 'Open MPI')} | {fmt(hand and hand / 1e3)} | {both} | {fmt(sp)}x | {fmt(sb)}x | {fmt(sh)}x |")
            continue
        nat = {m: pp[m][k + ("native",)] for m in MPIS if m in pp and k + ("native",) in pp[m]}
        man = [pp[m][k + ("manual",)] for m in MPIS if m in pp and k + ("manual",) in pp[m]]
        fm = min(nat.values()) if nat else None
        hand = min(man) if man else None
        sp = fm / r["ns"] if fm else None
        sh = hand / r["ns"] if hand else None
        out.append((r["case"], r["params"], r["ns"], sp, sh, None))
        md.append(f"| {r['case']} | {r['params']} | {r['bytes']} | {r['ns'] / 1e3:.2f} | {fmt(pipe and pipe / 1e3)} | "
                  f"{fmt(heap and heap / 1e3)} | {fmt(coop and coop / 1e3)} | "
                  f"{fmt(nat.get('MPICH') and nat['MPICH'] / 1e3)} | {fmt(nat.get('Open MPI') and nat['Open MPI'] / 1e3)} | "
                  f"{fmt(hand and hand / 1e3)} | {fmt(sp)}x | {fmt(sh)}x |")
    how = "same-run ratios" if same else "across runs"
    sps = [o for o in out if o[3]]
    if sps:
        g = gmean([o[3] for o in sps])
        w = min(sps, key=lambda o: o[3])
        md += ["", f"Geometric mean speedup over the faster MPI's datatype path ({how}): {g:.2f}x over {len(sps)} kernels; "
               f"worst {w[3]:.2f}x ({w[0]} {w[1]}).", ""]
        # The transport's own bound (runtime_mpi.cpp's ddtkit-bytes): the same kernels' ratios had
        # their layouts cost no more than contiguous bytes through the same runtime, same runs.
        sbs = [o for o in out if o[3] and o[5]]
        at_contig = ""
        if sbs:
            gb, gs = gmean([o[5] for o in sbs]), gmean([o[3] for o in sbs])
            below = [o for o in sbs if o[5] < 1.2]
            at_contig = (f"at contiguous bytes (the runtime moving each kernel's bytes as one run, same runs): geomean "
                         f"{gb:.2f}x over the {len(sbs)} kernels that have it (ddtkit {gs:.2f}x on them); "
                         f"{len(below)} below 1.2x there" + (f" ({', '.join(o[0] + ' ' + o[1] for o in below[:6])})" if below else ""))
            md += [f"The transport's own bound: {at_contig}. Where ddtkit's ratio is below this one, its layouts cost more "
                   "than their bytes; where the two are close, the transport bounds it.", ""]
        # The latency floor each MPI's run measured beside its kernels (runtime_mpi.cpp): a
        # kernel whose bytes move in far less time than a message takes tends to this ratio.
        floors = []
        for m in MPIS:
            fl = {r["method"]: r["ns"] for r in data.get(m, (None, []))[1] if r["suite"] == "rt_floor"}
            if "mpi" in fl and "ddtkit" in fl:
                floors.append(f"{m} {fl['mpi'] / 1e3:.2f} us, ddtkit {fl['ddtkit'] / 1e3:.2f} us ({fl['mpi'] / fl['ddtkit']:.2f}x)")
        floor = ("1-byte round trip, same run: " + "; ".join(floors)) if floors else ""
        if floor:
            md += [f"Latency floor ({floor}): the ratio a kernel tends to where its bytes take far less time "
                   "than a message.", ""]
        # The machine's own two-copy message between the two cores (bench/raw_pingpong.cpp: no
        # runtime, no MPI), a separate run: what an eager message cannot beat.
        if raw:
            cells = ", ".join(f"{b} B {ns / 1e3:.2f}" for b, ns in raw)
            md += [f"The machine's two-copy round trip with no runtime and no MPI (bench/raw_pingpong.cpp, its own run), us: "
                   f"{cells}.", ""]
            floor += f"; raw two-copy 1 B {raw[0][1] / 1e3:.2f} us"
        targets.append(("Runtime: DDTBench ping-pong geomean >= 2.5x the faster MPI's datatype path", f"{g:.2f}x ({how})",
                        "; ".join(x for x in (floor, at_contig) if x), g >= 2.5))
        targets.append(("Runtime: DDTBench ping-pong, every kernel >= 1.2x the faster MPI", f"worst {w[3]:.2f}x ({w[0]} {w[1]})",
                        "; ".join(x for x in (distance(data, "DDTBench ping-pong"), at_contig) if x), w[3] >= 1.2))
    shs = [o for o in out if o[4]]
    if shs:
        w = min(shs, key=lambda o: o[4])
        targets.append((f"Runtime: DDTBench ping-pong never slower than hand-packing over the faster MPI (beyond noise, >= {NOISE})",
                        f"worst {w[4]:.2f}x ({w[0]} {w[1]})", distance(data, "DDTBench ping-pong"), w[4] >= NOISE))
    return out


def stencil_section(md, targets, data):
    cells = defaultdict(dict)  # (decomp case, np, n, decomp) -> who -> ns
    for side, (_, rows) in data.items():
        for r in rows:
            if r["suite"] != "rt_stencil":
                continue
            cells[(r["case"], r["np"], r["n"], r["decomp"])][who_of(side, r["method"])] = r["ns"]
    if not cells:
        return cells
    md += ["### Stencil halo exchange", "",
           "3-D 7-point stencil, n^3 doubles per process with a one-cell halo, periodic process grid; one iteration "
           "exchanges the faces of every split dimension (irecv, isend, waitall), communication only. Microseconds per "
           "iteration on rank 0. ddtkit and MPI: subarray types; `hand`: the faces packed by hand around contiguous "
           "messages. With more processes than the machine's cores every figure includes the scheduler. "
           "Speedup = faster MPI (subarray) / ddtkit, taken within each MPI's run, which timed the MPI's iterations "
           "and ddtkit's runtime's in turn, sample by sample (`beside`; the smaller of the two runs' speedups), else "
           "across runs.", "",
           "| grid | P | n | ddtkit | ddtkit hand | MPICH | beside MPICH | MPICH hand | Open MPI | beside Open MPI | "
           "Open MPI hand | speedup |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    worst = None
    for key in sorted(cells, key=lambda k: (k[2], k[1], k[0])):
        c = cells[key]
        r = same_run_ratio(c, lambda x: x)
        if r is not None:
            sp = 1 / r
        else:
            fm = faster(c, MPIS, lambda x: x)
            sp = fm / c["ddtkit"] if fm and "ddtkit" in c else None
        md.append(f"| {key[3]} | {key[1]} | {key[2]} | " + " | ".join(
            fmt(c[w] / 1e3) if w in c else "n/a" for w in ("ddtkit", "ddtkit-hand", "MPICH", "MPICH ddtkit", "MPICH hand",
                                                             "Open MPI", "Open MPI ddtkit", "Open MPI hand")) + f" | {fmt(sp)}x |")
        if sp is not None and (worst is None or sp < worst[0]):
            worst = (sp, key)
    md.append("")
    if worst:
        nps = sorted({k[1] for k in cells})
        targets.append((f"Runtime: stencil >= 1.5x the faster MPI at {nps[0]}-{nps[-1]} processes",
                        f"worst {worst[0]:.2f}x ({worst[1][3]}, n={worst[1][2]})", "", worst[0] >= 1.5))
    return cells


PHASES = ("exchange", "translate", "attach", "copy")


def cost_section(md, targets, data):
    cost = defaultdict(lambda: defaultdict(dict))  # (design, block) -> first|steady -> phase -> row
    for r in data["ddtkit"][1]:
        if r["suite"] == "rt_cost":
            cost[(r["case"], int(r["params"]))][r["op"]][r["method"]] = r
    if not cost:
        return cost
    md += ["### Cost split of one transfer", "",
           "One 2 MiB vector element rank 0 -> rank 1 through the mapped heap (FALCON-X figure 5), microseconds per "
           "transfer, both ranks' phases added: exchange (the sender describing its layout), translate (the receiver "
           "finding or decoding it), attach (mapping the sender's segment, checking and translating its addresses), "
           "copy. `first`: new buffers and a new type (nothing cached); `steady`: the same transfer repeated. `wall` "
           "includes the 4-byte acknowledgement.", "",
           "| design | block | transfer | exchange | translate | attach | copy | wall | cache hits |", "|---|---|---|---|---|---|---|---|---|"]
    worst = None
    for (design, block), ph in sorted(cost.items()):
        for op in ("first", "steady"):
            p = ph.get(op, {})
            if not p:
                continue
            md.append(f"| {design} | {size(block)} | {op} | " + " | ".join(fmt(p[n]["ns"] / 1e3, ".3f") if n in p else "n/a"
                                                                          for n in PHASES + ("wall",))
                      + f" | {fmt(next(iter(p.values())).get('cache_hits'))} |")
        s = ph.get("steady", {})
        if design == "memoized" and s and "wall" in s:
            et = s["exchange"]["ns"] + s["translate"]["ns"]
            share = et / s["wall"]["ns"]
            if worst is None or share > worst[0]:
                worst = (share, block, et)
    md.append("")
    if worst:
        targets.append(("Runtime: a repeated transfer spends no measurable time on exchange + translation (memoized, < 1% of the transfer)",
                        f"worst {worst[2]:.0f} ns = {100 * worst[0]:.2f}% ({size(worst[1])} blocks)", "", worst[0] < 0.01))
    return cost


def plots(out, r):
    if not r:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    vec = r["vec"]
    series = list(CONFIGS) + list(MPIS) + ["MPICH hand", "Open MPI hand"]
    # ddtkit's designs in colours, the MPIs in greys: dashed their datatype path, dotted hand-packing over them.
    style = {k: "--" for k in ("MPICH", "Open MPI")}
    style.update({k: ":" for k in ("MPICH hand", "Open MPI hand")})
    colour = dict(zip(CONFIGS, ("tab:blue", "tab:orange", "tab:olive", "tab:cyan", "tab:purple", "tab:red", "tab:pink",
                                "tab:green")))
    colour.update({"MPICH": "dimgray", "MPICH hand": "dimgray", "Open MPI": "black", "Open MPI hand": "black",
                   "ddtkit": "tab:red", "ddtkit-hand": "tab:red"})
    style["ddtkit-hand"] = ":"
    if vec:
        fig, axes = plt.subplots(1, 3, figsize=(18, 5))
        for ax, metric, label in zip(axes, ("latency", "bw", "bibw"), ("latency (us)", "bandwidth (GB/s)", "bidirectional bandwidth (GB/s)")):
            t = vec.get(metric, {})
            for who in series:
                xs = [b for b in sorted(t) if who in t[b]]
                if not xs:
                    continue
                ys = [t[b][who]["ns"] / 1e3 if metric == "latency" else t[b][who]["gbs"] for b in xs]
                ax.plot(xs, ys, marker="o", ms=3, ls=style.get(who, "-"), color=colour[who], label=who)
            bound = vec.get("bound", {})
            if metric == "latency" and bound:
                xs = [b for b in sorted(bound) if "one-core ddt_copy" in bound[b]]
                ax.plot(xs, [bound[b]["one-core ddt_copy"]["ns"] / 1e3 for b in xs], color="silver", lw=3, alpha=0.6,
                        label="one core's copy (floor)")
            ax.set_xscale("log", base=2)
            if metric == "latency":
                ax.set_yscale("log")
            ax.set_xlabel("block bytes (2 MiB payload, stride 2 x block)")
            ax.set_ylabel(label)
        axes[0].legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "runtime_vector.png"), dpi=110)
        plt.close(fig)
    pp = r["pingpong"]
    if pp:
        fig, ax = plt.subplots(figsize=(14, 4.5))
        names = [f"{c} {p}" for c, p, *_ in pp]
        x = range(len(pp))
        ax.bar([i - 0.2 for i in x], [o[3] or float("nan") for o in pp], 0.4, label="vs faster MPI's datatype path")
        ax.bar([i + 0.2 for i in x], [o[4] or float("nan") for o in pp], 0.4, label="vs hand-packing over the faster MPI")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.axhline(2.5, color="red", lw=0.8, ls="--", label="target 2.5x (geomean)")
        ax.set_yscale("log")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=60, ha="right", fontsize=6)
        ax.set_ylabel("ping-pong speedup of ddtkit's runtime")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "runtime_ddtbench.png"), dpi=110)
        plt.close(fig)
    st = r["stencil"]
    if st:
        sizes = sorted({k[2] for k in st})
        fig, axes = plt.subplots(1, 2 * len(sizes), figsize=(7 * len(sizes), 4.5), squeeze=False)
        for j, (n, case) in enumerate((n, c) for n in sizes for c in ("1d", "3d")):
            ax = axes[0][j]
            keys = sorted((k for k in st if k[2] == n and (k[0] == case or (case == "3d" and k[0] == "1d" and k[1] == 2))),
                          key=lambda k: k[1])
            for who in ("ddtkit", "ddtkit-hand", "MPICH", "MPICH hand", "Open MPI", "Open MPI hand"):
                xs = [k[1] for k in keys if who in st[k]]
                ax.plot(xs, [st[k][who] / 1e3 for k in keys if who in st[k]], marker="o", ls=style.get(who, "-"),
                        color=colour[who], label=who)
            ax.set_yscale("log")
            ax.set_title(f"{case.upper()} decomposition, n = {n}")
            ax.set_xlabel("processes")
            ax.set_ylabel("us per iteration")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "runtime_stencil.png"), dpi=110)
        plt.close(fig)
    cost = r["cost"]
    if cost:
        keys = sorted(cost)
        labels, stacks = [], {p: [] for p in PHASES}
        walls = []
        for k in keys:
            for op in ("first", "steady"):
                p = cost[k].get(op, {})
                labels.append(f"{k[0]}\n{size(k[1])}\n{op}")
                for ph in PHASES:
                    stacks[ph].append(p[ph]["ns"] / 1e3 if ph in p else 0)
                walls.append(p["wall"]["ns"] / 1e3 if "wall" in p else float("nan"))
        # Left, the whole transfer (FALCON-X figure 5); right, the phases other than the copy, which
        # a repeated transfer should no longer pay and which the copy dwarfs on the left.
        fig, axes = plt.subplots(1, 2, figsize=(2 * max(7, len(labels) * 0.7), 4.5))
        for ax, phases in zip(axes, (PHASES, PHASES[:3])):
            bottom = [0.0] * len(labels)
            for ph in phases:
                ax.bar(range(len(labels)), stacks[ph], 0.6, bottom=bottom, label=ph)
                bottom = [b + v for b, v in zip(bottom, stacks[ph])]
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, fontsize=7)
            ax.set_ylabel("us per transfer (both ranks' phases)")
        axes[0].plot(range(len(labels)), walls, "k_", ms=18, mew=2, label="wall (with ack)")
        axes[0].set_title("one transfer: first vs steady")
        axes[1].set_title("without the copy: exchange, translate, attach")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "runtime_cost_split.png"), dpi=110)
        plt.close(fig)
