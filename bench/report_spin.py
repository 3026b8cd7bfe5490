"""The report's "NIC model (issue 14)" section: the sPIN offload model's figures beside the paper's.

Input (bench/results): spin.jsonl, written by `ddtkit spin --figures bench/results`
(tools/ddtkit/spin.cpp). Rows carry "fig": 8 and 8p (4 MiB vector, in order / permuted), 12 (handler
breakdown, gamma 1-16, also Fig. 14's queue), 13a / 13c (HPUs), 15 (queue over time, gamma 16),
16 and 16p (DDTBench kernels), pspin (the PsPIN preset). Offloaded times are simulated (deterministic);
the host path is ddt_unpack timed on this CPU with a cold cache, fastest of three runs.

The paper (seed 001, Di Girolamo et al., SC'19) gives its figures as plots; the numbers it states in
its text are quoted beside ours, and its shapes are the targets (issue 14).
"""
import json
import math
import os
from collections import defaultdict

STRATS = ("specialized", "hpu_local", "ro_cp", "rw_cp", "seek", "host", "iovec")
GENERAL = ("specialized", "hpu_local", "ro_cp", "rw_cp", "seek")


def fmt(x, spec=".1f"):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def load(out):
    path = os.path.join(out, "spin.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def by(rows, fig, *keys):
    t = {}
    for r in rows:
        if r["fig"] == fig:
            t[tuple(r[k] for k in keys)] = r
    return t


def section(md, targets, out):
    rows = load(out)
    if not rows:
        return None
    f8, f8p = by(rows, "8", "block", "strategy"), by(rows, "8p", "block", "strategy")
    f12 = by(rows, "12", "gamma_x", "strategy")
    f13a, f13c = by(rows, "13a", "hpus", "strategy"), by(rows, "13c", "hpus", "strategy")
    f16, f16p = by(rows, "16", "kernel", "params", "strategy"), by(rows, "16p", "kernel", "params", "strategy")
    blocks = sorted({b for b, _ in f8})
    line = rows[0]["line_gbit_s"]
    md += ["## NIC model (issue 14): sPIN offload of datatype processing", "",
           "A packet-level model of a sPIN NIC (`ddt_spin_receive`, include/ddtkit_spin.h) with the paper's configuration: "
           "2 KiB packets at 200 Gbit/s, 16 HPUs at 800 MHz, 6 MiB NIC memory at 50 GiB/s, x32 PCIe Gen4, epsilon 0.2, "
           "612 B checkpoints. Every handler is ddtkit code that really moves its packet's bytes into the receive buffer; "
           "its simulated time is its counted operations times the per-operation costs of src/spin/costs.hpp (sources "
           "there). Every transfer below is byte-checked against ddt_unpack. Offloaded times are simulated; `host` is the "
           "NIC writing the packed message contiguously, then `ddt_unpack` timed on this CPU with a cold cache (fastest "
           "of three; the CPU is shared). `seek` is ddtkit's handler: each packet seeks its first byte in the layout "
           "(NIC memory: the serialised layout).", "", costs_used(rows), ""]

    # Fig. 8
    md += ["### Fig. 8: unpack throughput, 4 MiB vector, stride 2 x block (Gbit/s)", "",
           "Line rate " + fmt(line, ".0f") + " Gbit/s. `*`: fell back to the host. `perm.`: packets in a seeded random "
           "permutation.", "",
           "| block B | " + " | ".join(STRATS) + " | seek perm. | rw_cp perm. |",
           "|---|" + "---|" * (len(STRATS) + 2)]
    for b in blocks:
        cells = []
        for s in STRATS:
            r = f8.get((b, s))
            cells.append(fmt(r and r["gbit_s"]) + ("*" if r and r["fell_back"] else ""))
        cells += [fmt(f8p.get((b, s)) and f8p[(b, s)]["gbit_s"]) for s in ("seek", "rw_cp")]
        md.append(f"| {b} | " + " | ".join(cells) + " |")
    md += ["", "The paper (§3.2.5, §5.2): the specialised handler reaches line rate from 64 B blocks (gamma = 32); RO-CP "
           "is limited by the checkpoint copy, HPU-local by the catch-up, which shrinks as blocks grow; offloaded "
           "processing is slower than host unpack at 4 B blocks.", ""]

    # Fig. 12 / 14
    gammas = sorted({g for g, _ in f12})
    md += ["### Fig. 12: handler time per packet (ns), by phase; Fig. 14: DMA queue", "",
           "gamma blocks per 2 KiB packet (block = 2048 / gamma B). init: start, descriptor check, RO-CP's checkpoint "
           "copy; setup: catch-up, resets, seeks; blocks: finding each block and issuing its DMA. queue: largest DMA "
           "write queue occupancy (Fig. 14), requests: DMA writes of the message.", "",
           "| gamma | strategy | init | setup | blocks | total | ratio to specialised | queue max | requests |",
           "|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for g in gammas:
        spec = f12.get((g, "specialized"))
        st = spec and spec["init_ns"] + spec["setup_ns"] + spec["block_ns"]
        for s in GENERAL:
            r = f12.get((g, s))
            if not r:
                continue
            tot = r["init_ns"] + r["setup_ns"] + r["block_ns"]
            ratio = tot / st if st else float("nan")
            if s == "rw_cp":
                ratios.append(ratio)
            md.append(f"| {g} | {s} | {fmt(r['init_ns'], '.0f')} | {fmt(r['setup_ns'], '.0f')} | {fmt(r['block_ns'], '.0f')} | "
                      f"{fmt(tot, '.0f')} | {fmt(ratio, '.2f')} | {r['dma_queue_max']} | {r['dma_requests']} |")
    ro16 = f12.get((16, "ro_cp"))
    ro_share = ro16 and ro16["setup_ns"] / (ro16["init_ns"] + ro16["setup_ns"] + ro16["block_ns"])
    md += ["", f"The paper (§5.2): HPU-local is dominated by setup (catch-up); RO-CP spends more in init (the copy) and "
           f"87% of its time in catch-up at gamma = 16 (here: {fmt(ro_share and 100 * ro_share, '.0f')}%); RW-CP is a "
           f"factor of two slower than specialised (here: {', '.join(fmt(x, '.2f') for x in ratios)} for gamma "
           f"{', '.join(str(g) for g in gammas)}). Fig. 14: under 160 requests in every case (here: at most "
           f"{max((r['dma_queue_max'] for r in f12.values()), default=0)}).", ""]
    traces = [r for r in rows if r["fig"] == "15" and r.get("t_us")]
    if traces:
        g16 = max(gammas, default=None)
        md += ["Fig. 15, the DMA write queue over the message at gamma = " + str(g16) + " (each strategy's trace; "
               "mean: time-averaged while the message was processed): " +
               "; ".join(f"{r['strategy']} at most {max(r['queue'])} over {fmt(r['t_us'][-1] - r['t_us'][0], '.0f')} us"
                         + (f", mean {fmt(f12[(g16, r['strategy'])]['dma_queue_mean'], '.2f')}" if (g16, r["strategy"]) in f12 else "")
                         for r in traces) + ". Host overhead (the host building the descriptors or checkpoints, "
               "measured on this CPU, not in the traces): " +
               ", ".join(f"{s} {fmt(f12[(g16, s)]['host_setup_s'] * 1e6, '.0f')} us" for s in GENERAL if (g16, s) in f12) +
               ". The paper (§5.2): HPU-local and RO-CP, the slowest handlers, issue the fewest requests per second and "
               "keep the queue lowest; RW-CP and specialised peak higher; its figure also shows the host overhead of "
               "making the checkpoints.", ""]

    # Fig. 13
    hp = sorted({h for h, _ in f13a})
    md += ["### Fig. 13: scalability and NIC memory", "",
           "(a) throughput (Gbit/s) against HPUs at 2 KiB blocks; (c) NIC memory (B) against HPUs at 64 B blocks.", "",
           "| HPUs | " + " | ".join(f"{s} Gbit/s" for s in GENERAL) + " | " + " | ".join(f"{s} B" for s in GENERAL) + " |",
           "|---|" + "---|" * (2 * len(GENERAL))]
    for h in hp:
        md.append(f"| {h} | " + " | ".join(fmt(f13a.get((h, s)) and f13a[(h, s)]["gbit_s"]) for s in GENERAL) + " | " +
                  " | ".join(str(f13c[(h, s)]["nic_memory"]) if (h, s) in f13c else "n/a" for s in GENERAL) + " |")
    md += ["", "(b) NIC memory (B) against block size, 16 HPUs:", "",
           "| block B | " + " | ".join(GENERAL) + " | rw_cp dr B |", "|---|" + "---|" * (len(GENERAL) + 1)]
    for b in blocks:
        md.append(f"| {b} | " + " | ".join(str(f8[(b, s)]["nic_memory"]) if (b, s) in f8 else "n/a" for s in GENERAL) +
                  f" | {f8[(b, 'rw_cp')]['checkpoint_interval'] if (b, 'rw_cp') in f8 else 'n/a'} |")
    md += ["", "The paper (§5.2): specialised reaches line rate with two HPUs; HPU-local's memory grows with the HPUs "
           "(one segment each); the checkpointed variants shrink dr as handlers get faster (larger blocks, more HPUs), "
           "so their memory grows.", ""]

    # Fig. 16
    kernels = sorted({(k, p) for k, p, _ in f16}, key=lambda x: (x[0], x[1]))
    md += ["### Fig. 16: DDTBench kernels, speedup over host unpack", "",
           "gamma: blocks per packet; T: host time (us); S: message KiB. Speedup = host time / strategy time (`*`: fell "
           "back to host: no specialised handler). NIC KiB: what the host moved to the NIC (RW-CP: layout and "
           "checkpoints; seek: the serialised layout; iovec: the whole list).", "",
           "| kernel | params | gamma | T us | S KiB | specialised | rw_cp | seek | seek perm. | iovec | rw_cp NIC KiB | seek NIC KiB | iovec KiB |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    seek_vs_rw, speed = [], defaultdict(list)
    for k, p in kernels:
        host = f16.get((k, p, "host"))
        if not host:
            continue
        T = host["seconds"]
        cell = {}
        for s in ("specialized", "rw_cp", "seek", "iovec"):
            r = f16.get((k, p, s))
            cell[s] = r and T / r["seconds"]
            if r and not r["fell_back"]:
                speed[s].append(cell[s])
        sp = f16p.get((k, p, "seek"))
        rw, sk = f16.get((k, p, "rw_cp")), f16.get((k, p, "seek"))
        if rw and sk:
            seek_vs_rw.append((f"{k}/{p}", rw["seconds"] / sk["seconds"]))
        specr = f16.get((k, p, "specialized"))
        md.append(f"| {k} | {p} | {fmt(sk and sk['gamma'])} | {fmt(T * 1e6, '.2f')} | {fmt(host['size'] / 1024)} | "
                  f"{fmt(cell['specialized'], '.2f')}{'*' if specr and specr['fell_back'] else ''} | {fmt(cell['rw_cp'], '.2f')} | "
                  f"{fmt(cell['seek'], '.2f')} | {fmt(sp and T / sp['seconds'], '.2f')} | {fmt(cell['iovec'], '.2f')} | "
                  f"{fmt(rw and rw['nic_setup_bytes'] / 1024, '.2f')} | {fmt(sk and sk['nic_setup_bytes'] / 1024, '.2f')} | "
                  f"{fmt(f16.get((k, p, 'iovec')) and f16[(k, p, 'iovec')]['nic_setup_bytes'] / 1024, '.2f')} |")
    md += ["", "The paper (§5.3): RW-CP and specialised reach up to 12x over host unpack; no speedup for one-packet "
           "messages or gamma of hundreds (SPECFEM3D_oc, gamma = 512); iovec needs the whole list on the NIC. Here, best "
           "speedups: " + ", ".join(f"{s} {fmt(max(v), '.1f')}x" for s, v in speed.items() if v) + ".", ""]

    pspin = [r for r in rows if r["fig"] == "pspin"]
    if pspin:
        md += ["PsPIN preset (32 HPUs at 1 GHz, 400 Gbit/s, 1 KiB packets), 4 MiB vector: " +
               "; ".join(f"{r['strategy']} {r['block']} B {fmt(r['gbit_s'])} Gbit/s" for r in pspin) + ".", ""]

    # Targets
    tgt = []

    def t8(s, b):
        r = f8.get((b, s))
        return r and r["gbit_s"]
    from64 = [b for b in blocks if b >= 64]
    spec_min = min((t8("specialized", b) for b in from64), default=float("nan"))
    tgt.append(("NIC model: specialised handler at line rate from 64 B blocks (Fig. 8)",
                f"min {fmt(spec_min)} Gbit/s over 64 B-16 KiB (line {fmt(line, '.0f')})", "paper: from 64 B", spec_min >= 0.97 * line))
    tgt.append(("NIC model: RW-CP handler within 2x of specialised (Fig. 12, gamma 1-16)",
                "ratios " + ", ".join(fmt(x, ".2f") for x in ratios), "paper: factor of two", bool(ratios) and max(ratios) <= 2.0))
    below = [b for b in blocks if max(t8("hpu_local", b), t8("ro_cp", b)) > min(t8("specialized", b), t8("rw_cp", b)) * 1.001]
    tgt.append(("NIC model: HPU-local and RO-CP below specialised and RW-CP (Fig. 8)",
                "every block size" if not below else "not at " + ", ".join(f"{b} B" for b in below), "paper: below both", not below))
    host4 = t8("host", 4)
    off4 = {s: t8(s, 4) for s in ("specialized", "rw_cp", "seek")}
    tgt.append(("NIC model: offload slower than host unpack at 4 B blocks (Fig. 8)",
                f"host {fmt(host4)}; " + ", ".join(f"{s} {fmt(v)}" for s, v in off4.items()) + " Gbit/s", "paper: slower",
                all(v < host4 for v in off4.values())))
    worse8 = [b for b in blocks if f8[(b, "seek")]["seconds"] > f8[(b, "rw_cp")]["seconds"]]
    worse16 = [(n, x) for n, x in seek_vs_rw if x < 1.0]
    tgt.append(("NIC model: seek at least as fast as RW-CP, every block size (Fig. 8)",
                "all" if not worse8 else "slower at " + ", ".join(f"{b} B" for b in worse8), "", not worse8))
    tgt.append(("NIC model: seek at least as fast as RW-CP, every DDTBench kernel (Fig. 16)",
                f"{len(seek_vs_rw) - len(worse16)} of {len(seek_vs_rw)}" +
                ("" if not worse16 else "; slower: " + ", ".join(f"{n} ({fmt(x, '.3f')}x)" for n, x in worse16)), "", not worse16))
    seek_min = min((t8("seek", b) for b in from64), default=float("nan"))
    tgt.append(("NIC model: seek at line rate from 64 B blocks, 16 HPUs (Fig. 8)", f"min {fmt(seek_min)} Gbit/s", "",
                seek_min >= 0.97 * line))
    seek_rows = [r for r in rows if r.get("strategy") == "seek" and "nic_memory" in r and not r["fell_back"]]
    over = [r for r in seek_rows if r["nic_memory"] > r["layout_bytes"]]
    rw_mem = [r["nic_memory"] for r in rows if r.get("strategy") == "rw_cp" and r["fig"] == "16"]
    sk_mem = [r["nic_memory"] for r in rows if r.get("strategy") == "seek" and r["fig"] == "16"]
    tgt.append(("NIC model: seek's NIC memory no larger than the serialised layout",
                f"{len(seek_rows) - len(over)} of {len(seek_rows)} runs; DDTBench max {max(sk_mem, default=0)} B vs RW-CP "
                f"checkpoints max {max(rw_mem, default=0)} B", "", not over))
    # Unaffected: the handlers do the same work whatever the order (no resets, no catch-up). The
    # message time still moves with the order when packets cost unequal handler times (the last
    # packet to arrive decides when the last handler ends), in either direction.
    pairs = [(f8[(b, "seek")], f8p[(b, "seek")]) for b in blocks if (b, "seek") in f8p and (b, "seek") in f8]
    pairs += [(f16[(k, p, "seek")], f16p[(k, p, "seek")]) for k, p in kernels if (k, p, "seek") in f16 and (k, p, "seek") in f16p]

    def work(r):
        return r["init_ns"] + r["setup_ns"] + r["block_ns"]
    work_dev = max((abs(work(b) / work(a) - 1) for a, b in pairs if work(a) > 0), default=float("nan"))
    time_dev = [b["seconds"] / a["seconds"] - 1 for a, b in pairs]
    rw_perm = [f8p[(b, "rw_cp")]["seconds"] / f8[(b, "rw_cp")]["seconds"] - 1 for b in blocks if (b, "rw_cp") in f8p]
    tgt.append(("NIC model: seek unaffected by packet reordering (Fig. 8, 16 permuted)",
                f"handler work changed by at most {fmt(100 * work_dev, '.2f')}%; message time {fmt(100 * min(time_dev, default=0), '+.1f')}% "
                f"to {fmt(100 * max(time_dev, default=0), '+.1f')}% (RW-CP on Fig. 8: up to {fmt(100 * max(rw_perm, default=0), '+.0f')}%)",
                "", work_dev <= 1e-6 and max(time_dev, default=0) <= 0.10))
    checked = [r for r in rows if "bytes_ok" in r]
    wrong = [r for r in checked if not r["bytes_ok"] or r["rc"]]
    tgt.append(("NIC model: every simulated transfer byte-exact", f"{len(checked) - len(wrong)} of {len(checked)}", "", not wrong))
    targets += tgt
    md += ["### Targets of issue 14", "", "| target | measured | paper | met |", "|---|---|---|---|"]
    md += [f"| {t} | {m} | {p} | {'yes' if ok else '**NO**'} |" for t, m, p, ok in tgt]
    md += ["", "Where the model departs from the paper, from this run's rows (the offloaded times are simulated and "
           "repeat exactly; the host's are measured on a shared CPU and move from run to run, and the speedups and the "
           "4 B comparison with them):", ""]
    md += ["- " + d for d in departures(f8, f12, f13a, f16, line)]
    md += ["- The default handler costs are held to what the paper's text states (src/spin/costs.hpp) rather than read off "
           "its plots. The DMA queue drains into a x32 Gen4 link (63 GB/s) faster than the 25 GB/s line fills it, so "
           "occupancies stay far below the paper's (which modelled PCIe packets in SST). RW-CP keeps at least P "
           "checkpoint sequences (the paper's epsilon bound alone leaves HPUs idle at small blocks). The host side is "
           "ddtkit's unpack on this CPU, not MPITypes on an i7-4770, so the speedups scale with how fast ddtkit "
           "unpacks here.", "",
           "Not modelled: HPU caches and NIC memory contention other than checkpoint copies, handler stalls on a full "
           "DMA queue, link-level flow control.", ""]
    return rows


# The handler cost model's fields (ddt_spin_params' *_cycles, `ddtkit spin --*-cycles`), as each
# row records them under "cycles"; their defaults and sources are in src/spin/costs.hpp.
COSTS = (("start", "start"), ("block", "specialised/seek/iovec block"), ("general_block", "general block"),
         ("catchup_block", "catch-up block"), ("catchup_byte", "catch-up byte"), ("seek_step", "seek step"),
         ("run", "seek run"))


def cost(r, key):
    """The row's cost of `key` in HPU cycles, as text with its field name (empty for rows without costs)."""
    c = r.get("cycles") if r else None
    return f"{key}_cycles = {fmt(c[key], 'g')}" if c and key in c else f"{key}_cycles"


def costs_used(rows):
    """One sentence naming the handler costs the rows were simulated with (several sets if they differ)."""
    sets = sorted({tuple(r["cycles"][k] for k, _ in COSTS) for r in rows if r.get("cycles")})
    if not sets:
        return "The rows do not record their handler costs (a spin.jsonl older than the cost fields)."
    text = "; or ".join(", ".join(f"{name} {fmt(v, 'g')}" for (_, name), v in zip(COSTS, s)) for s in sets)
    return (f"Handler costs of this run, in HPU cycles per operation: {text}" +
            (" (the rows differ: each records its own)" if len(sets) > 1 else "") +
            ". The defaults, and the source of each, are in src/spin/costs.hpp; `ddtkit spin --block-cycles` etc. set them.")


def handler_ns(r):
    return r["init_ns"] + r["setup_ns"] + r["block_ns"]


def departures(f8, f12, f13a, f16, line):
    """The disagreements with the paper's text, each with where and why, computed from the rows."""
    out = []

    # Fig. 8 at 4 B blocks: the paper has every offloaded strategy slower than host unpack.
    h4 = f8.get((4, "host"))
    off4 = {s: f8.get((4, s)) for s in ("specialized", "seek", "rw_cp")}
    faster = [s for s, r in off4.items() if h4 and r and not r["fell_back"] and r["gbit_s"] > h4["gbit_s"]]
    if faster:
        r = off4[faster[0]]
        per, hb = handler_ns(r), r["hpus"] * r["packet"] * 8
        need = hb / h4["gbit_s"]  # ns per handler for the HPUs to fall to the host's rate
        ghz = r.get("hpu_ghz")
        cyc = ""
        if ghz and r["gamma"]:
            cyc = (f"; at {fmt(ghz, 'g')} GHz that is about {fmt((need - r['init_ns'] - r['setup_ns']) * ghz / r['gamma'], '.0f')} "
                   f"cycles per block instead of the model's {fmt(r['block_ns'] * ghz / r['gamma'], '.0f')} "
                   f"({cost(r, 'block')})")
        slower = [s for s, x in off4.items() if s not in faster and x and not x["fell_back"]]
        fast_s = ", ".join(s + " " + fmt(off4[s]["gbit_s"]) for s in faster)
        slow_s = ", ".join(s + " at " + fmt(off4[s]["gbit_s"]) for s in slower)
        out.append(
            f"Fig. 8, 4 B blocks: {fast_s} Gbit/s against host unpack's {fmt(h4['gbit_s'])}, where the paper has offload "
            "slower than the host" + (f" ({slow_s} is slower here)" if slower else "")
            + f". A {faster[0]} handler of gamma = {fmt(r['gamma'], '.0f')} blocks takes {fmt(per, '.0f')} ns "
            f"({fmt(r['block_ns'], '.0f')} of them on blocks), so {r['hpus']} HPUs handle at most {fmt(hb / per)} Gbit/s. To fall "
            f"below this host the handler would need at least {fmt(need, '.0f')} ns{cyc}. That would fit the cost to ddtkit's "
            "unpack on this CPU (cold cache), not to the paper's host (MPITypes on an i7-4770), so the default stays at "
            "what the paper's text supports and this target is reported as missed (costs.hpp).")

    # Fig. 12: RO-CP's catch-up share at gamma = 16 (the paper: 87%).
    ro = f12.get((16, "ro_cp"))
    if ro and handler_ns(ro) > 0:
        share = ro["setup_ns"] / handler_ns(ro)
        paper = 0.87
        dp = ro["checkpoint_interval"] / ro["packet"] if ro["packet"] else 0
        if 0 < share < 1 and abs(share - paper) > 0.05:
            factor = (paper / (1 - paper)) / (share / (1 - share))
            out.append(
                f"Fig. 12, RO-CP at gamma = 16: catch-up is {fmt(100 * share, '.0f')}% of the handler (paper: 87%). Its dr "
                f"is {ro['checkpoint_interval']} B ({fmt(dp, '.0f')} packets, the epsilon model's with one sequence per "
                f"HPU at least), so a handler in order catches up over {fmt((dp - 1) / 2, '.1f')} packets on average, each "
                f"block at the model's catch-up cost ({cost(ro, 'catchup_block')}, {cost(ro, 'catchup_byte')}). The paper "
                "states neither its RO-CP dr nor its "
                f"cost per catch-up step; 87% needs the catch-up {fmt(factor, '.1f')}x as long against the rest of the "
                "handler (a longer dr, or MPITypes segment steps dearer than the model's).")

    # Fig. 13a: at 2 KiB blocks the paper has every strategy but the specialised one held below line rate by
    # its overheads (catch-up for HPU-local) as the HPUs grow.
    two = min((h for h, s in f13a if s == "specialized" and f13a[(h, s)]["gbit_s"] >= 0.97 * line), default=None)
    hl = sorted(h for h, s in f13a if s == "hpu_local" and f13a[(h, s)]["gbit_s"] >= 0.97 * line)
    g1 = f12.get((1, "hpu_local"))
    if two is not None and hl and hl[0] <= two and g1:
        out.append(
            f"Fig. 13a, 2 KiB blocks: HPU-local reaches line rate with {hl[0]} HPUs ({fmt(f13a[(hl[0], 'hpu_local')]['gbit_s'])} "
            f"Gbit/s), as the specialised handler does with {two}, where the paper has it held back by its catch-up. At "
            "gamma = 1 a handler catches up over the P - 1 packets the other HPUs took, one block each, at the model's "
            f"catch-up cost per block ({cost(g1, 'catchup_block')}): {fmt(g1['setup_ns'], '.0f')} ns of a {fmt(handler_ns(g1), '.0f')} ns handler with "
            f"{g1['hpus']} HPUs (Fig. 12), against the {fmt(g1['hpus'] * g1['packet'] * 8 / line, '.0f')} ns those HPUs "
            "have per packet at line rate. RO-CP's catch-up share above rests on the same per-block cost.")

    # Fig. 16: one-packet messages (the paper: no speedup).
    def best(k, p):
        h = f16.get((k, p, "host"))
        c = [(h["seconds"] / r["seconds"], s, r) for s in ("specialized", "rw_cp", "seek")
             for r in [f16.get((k, p, s))] if h and r and not r["fell_back"] and r["seconds"] > 0]
        return max(c, key=lambda x: x[0]) if c else None
    ones = sorted({(k, p) for k, p, _ in f16 if (k, p, "host") in f16 and f16[(k, p, "host")]["size"] <= f16[(k, p, "host")]["packet"]})
    ones = [(k, p, best(k, p)) for k, p in ones]
    ones = [x for x in ones if x[2]]
    if ones and max(b[0] for _, _, b in ones) > 1.1:
        k, p, (sp, s, r) = max(ones, key=lambda x: x[2][0])
        T = f16[(k, p, "host")]["seconds"]
        ghz = r.get("hpu_ghz")
        gap = T - r["seconds"]
        out.append(
            "Fig. 16, one-packet messages: best speedups "
            + ", ".join(f"{kk} {pp} {fmt(b[0], '.1f')}x ({b[1]})" for kk, pp, b in ones)
            + ", where the paper finds none (its one-packet inputs are COMB's, which the DDTBench spec does not give): "
            "its reason is that one packet cannot use the HPUs' parallelism and the processing is only delayed by the "
            "handler's latency. "
            f"Here the whole of {k} {p} on the NIC takes {fmt(r['seconds'] * 1e9, '.0f')} ns (the packet's arrival, one "
            f"{s} handler of {fmt(handler_ns(r), '.0f')} ns of which {fmt(r['init_ns'], '.0f')} ns is its start, the "
            f"completion handler and the DMA), against {fmt(T * 1e6, '.2f')} us for the host (a cold-cache ddt_unpack of "
            f"{f16[(k, p, 'host')]['size']} B, whose time is latency, not bandwidth). The model's handler start "
            f"({cost(r, 'start')}) is optimistic and the header handler that matches the message is not costed (model.cpp: it "
            f"runs on the first packet's arrival and takes no time); no speedup would need {fmt(gap * 1e6, '.2f')} us more of "
            "handler latency" + (f" ({fmt(gap * ghz * 1e9, '.0f')} HPU cycles)" if ghz else "") + ".")

    # Fig. 16: SPECFEM3D_oc, gamma in the hundreds (the paper: no speedup).
    oc = sorted({p for k, p, _ in f16 if k == "SPECFEM3D_oc"})
    cands = [(p, best("SPECFEM3D_oc", p)) for p in oc]
    cands = [(p, b) for p, b in cands if b]
    if cands and max(b[0] for _, b in cands) > 1.1:
        p, (sp, s, r) = max(cands, key=lambda x: x[1][0])
        h = f16[("SPECFEM3D_oc", p, "host")]
        npk = -(-h["size"] // h["packet"])
        par = min(npk, r["hpus"])
        gam = [f16[("SPECFEM3D_oc", q, "seek")]["gamma"] for q in oc if ("SPECFEM3D_oc", q, "seek") in f16]
        rw = [h2["seconds"] / x["seconds"] for q in oc for h2, x in [(f16.get(("SPECFEM3D_oc", q, "host")), f16.get(("SPECFEM3D_oc", q, "rw_cp")))]
              if h2 and x and not x["fell_back"]]
        out.append(
            f"Fig. 16, SPECFEM3D_oc (gamma {fmt(min(gam), '.0f')}-{fmt(max(gam), '.0f')}; the paper's is 512): up to "
            f"{fmt(sp, '.1f')}x with {s} ({p}; RW-CP up to {fmt(max(rw, default=float('nan')), '.1f')}x), where the paper "
            "finds no speedup, for two causes: handler time linear in gamma, and 512 DMA writes of 4 B per packet on "
            f"PCIe. The first holds here too ({fmt(handler_ns(r), '.0f')} ns per {s} handler on average, "
            f"{fmt(100 * r['block_ns'] / handler_ns(r), '.0f')}% of it on blocks), but the message's {npk} packets run on "
            f"{par} HPUs at once, so it takes about one handler ({fmt(r['seconds'] * 1e6, '.2f')} us) while the host's time "
            f"grows with the message ({fmt(h['seconds'] * 1e6, '.2f')} us); the second does not bite on the x32 Gen4 model "
            f"(largest DMA queue {r['dma_queue_max']}). Per-block costs about {fmt(sp, '.1f')}x the model's would remove "
            "the speedup; the defaults are held to the paper's text (costs.hpp), which gives no handler time at gamma in "
            "the hundreds.")
    return out


def plots(out, rows):
    if not rows:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    f8 = by(rows, "8", "block", "strategy")
    blocks = sorted({b for b, _ in f8})
    line = rows[0]["line_gbit_s"]
    fig, ax = plt.subplots(figsize=(8, 5))
    for s in STRATS:
        xs = [b for b in blocks if (b, s) in f8]
        ax.plot(xs, [f8[(b, s)]["gbit_s"] for b in xs], marker="o", label=s)
    ax.axhline(line, color="gray", linestyle="--", label="line rate")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size (B), stride 2 x block, 4 MiB message")
    ax.set_ylabel("Gbit/s")
    ax.set_title("Fig. 8: unpack throughput (16 HPUs)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "spin_fig8.png"), dpi=110)
    plt.close(fig)

    f12 = by(rows, "12", "gamma_x", "strategy")
    gammas = sorted({g for g, _ in f12})
    fig, axes = plt.subplots(1, len(gammas), figsize=(3 * len(gammas), 4), sharey=True)
    for ax, g in zip(axes, gammas):
        ss = [s for s in GENERAL if (g, s) in f12]
        bottom = [0.0] * len(ss)
        for phase, colour in (("init_ns", "tab:blue"), ("setup_ns", "tab:orange"), ("block_ns", "tab:green")):
            vals = [f12[(g, s)][phase] for s in ss]
            ax.bar(ss, vals, bottom=bottom, color=colour, label=phase[:-3])
            bottom = [a + b for a, b in zip(bottom, vals)]
        ax.set_title(f"gamma = {g}")
        ax.tick_params(axis="x", rotation=60)
    axes[0].set_ylabel("ns per handler")
    axes[0].legend()
    fig.suptitle("Fig. 12: handler time breakdown")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "spin_fig12.png"), dpi=110)
    plt.close(fig)

    f13a, f13c = by(rows, "13a", "hpus", "strategy"), by(rows, "13c", "hpus", "strategy")
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for s in GENERAL:
        hs = sorted(h for h, x in f13a if x == s)
        axes[0].plot(hs, [f13a[(h, s)]["gbit_s"] for h in hs], marker="o", label=s)
        xs = [b for b in blocks if (b, s) in f8]
        axes[1].plot(xs, [max(1, f8[(b, s)]["nic_memory"]) for b in xs], marker="o", label=s)
        hs = sorted(h for h, x in f13c if x == s)
        axes[2].plot(hs, [max(1, f13c[(h, s)]["nic_memory"]) for h in hs], marker="o", label=s)
    axes[0].set(xlabel="HPUs", ylabel="Gbit/s", title="(a) throughput, 2 KiB blocks")
    axes[1].set(xlabel="block size (B)", ylabel="NIC memory (B)", title="(b) NIC memory, 16 HPUs", xscale="log", yscale="log")
    axes[2].set(xlabel="HPUs", ylabel="NIC memory (B)", title="(c) NIC memory, 64 B blocks", yscale="log")
    axes[0].legend(fontsize=8)
    fig.suptitle("Fig. 13")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "spin_fig13.png"), dpi=110)
    plt.close(fig)

    traces = [r for r in rows if r["fig"] == "15"]
    if traces:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for r in traces:
            ax.step(r["t_us"], r["queue"], where="post", label=r["strategy"])
        ax.set(xlabel="time (us)", ylabel="DMA write requests queued", title="Fig. 15: DMA queue over time, gamma = 16")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "spin_fig15.png"), dpi=110)
        plt.close(fig)

    f16 = by(rows, "16", "kernel", "params", "strategy")
    kernels = sorted({(k, p) for k, p, _ in f16})
    if kernels:
        fig, ax = plt.subplots(figsize=(max(10, 0.35 * len(kernels)), 5))
        width = 0.2
        for i, s in enumerate(("specialized", "rw_cp", "seek", "iovec")):
            xs, ys = [], []
            for j, (k, p) in enumerate(kernels):
                h, r = f16.get((k, p, "host")), f16.get((k, p, s))
                if h and r and not r["fell_back"]:
                    xs.append(j + (i - 1.5) * width)
                    ys.append(h["seconds"] / r["seconds"])
            ax.bar(xs, ys, width=width, label=s)
        ax.axhline(1, color="gray", linewidth=0.8)
        ax.set_xticks(range(len(kernels)))
        ax.set_xticklabels([f"{k} {p}" for k, p in kernels], rotation=90, fontsize=7)
        ax.set_ylabel("speedup over host unpack")
        ax.set_title("Fig. 16: DDTBench kernels")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "spin_fig16.png"), dpi=110)
        plt.close(fig)
