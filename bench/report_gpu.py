"""The report's "GPU (issue 12)" section, from bench/results/gpu.jsonl (bench/gpu_bench.cpp).

Every ratio is of two medians measured in one process, methods interleaved rep by rep. Payload
bandwidths are payload bytes over time; "of copy" is the payload's device-to-device
cudaMemcpyAsync time over the method's (1.0 = as fast as copying the packed bytes contiguously).
Where the machine had no usable CUDA device, gpu.jsonl holds the reason and the section says it.
"""
import json
import os

MIB = 1 << 20


def load(out):
    path = os.path.join(out, "gpu.jsonl")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def general(r):
    g = r.get("general_s")
    return f"{g / r['pack_s']:.2f}" if g else "-"


def hand(r):
    """The hand-written kernels (bench/gpu_hand.cu) as fractions of the copy: "pack / unpack"."""
    if not r.get("hand_pack_s"):
        return "-"
    return f"{r['memcpy_s'] / r['hand_pack_s']:.2f} / {r['memcpy_s'] / r['hand_unpack_s']:.2f}"


def yaksa(r):
    """Yaksa's CUDA backend (bench/gpu_yaksa.hpp): its time over ddtkit's, "pack / unpack" (above 1:
    ddtkit faster), from the set that interleaves both with their own copy; "wrong or refused"
    where its packed bytes differed from ddtkit's, "-" where it was not built."""
    if "yaksa_ok" not in r:
        return "-"
    if not r["yaksa_ok"] or not r.get("yaksa_pack_s"):
        return "wrong or refused"
    p, u = r.get("yaksa_ddt_pack_s"), r.get("yaksa_ddt_unpack_s")
    if not p:  # rows of a run before the interleaved set: across two sets, marked so
        p, u = r["pack_s"], r["unpack_s"]
        return f"{r['yaksa_pack_s'] / p:.2f}x / {r['yaksa_unpack_s'] / u:.2f}x (two sets)"
    return f"{r['yaksa_pack_s'] / p:.2f}x / {r['yaksa_unpack_s'] / u:.2f}x"


def size(b):
    return f"{b // MIB} MiB" if b >= MIB else f"{b // 1024} KiB" if b >= 1024 else f"{b} B"


def section(md, targets, out):
    rows = load(out)
    md += ["## GPU (issue 12): pack, unpack and copy on the device", ""]
    if rows is None:
        md += ["Absent: bench/gpu_bench.cpp did not run (the GPU layer is built only where the CUDA toolkit is found).", ""]
        return None
    if rows and "absent" in rows[0]:
        md += [f"Absent: {rows[0]['absent']}. The GPU layer is built and its kernels' logic is tested on the CPU "
               "(`gpu_units`); its benchmarks need a GPU (`make bench` or `make bench-gpu` on one).", ""]
        targets.append(("GPU (issue 12): every target", "not measured: no GPU", "", None))
        return None
    dev = next((r for r in rows if r.get("suite") == "device"), {"name": "?"})
    vec = [r for r in rows if r.get("suite") == "vector"]
    yk = next((r for r in rows if r.get("suite") == "yaksa"), {"absent": "not run"})
    peer = (f"Yaksa's CUDA backend (MPICH's engine, `{yk['path']}`; its types built of doubles, ints or bytes, the widest "
            "that fits) runs on the same stream, its packed bytes checked against ddtkit's once per row, and is timed in "
            "an interleaved set of its own after ddtkit's (\"two sets\": a ratio across them, each set's own copy beside "
            "it in the row's data)." if "path" in yk else f"Yaksa: absent ({yk['absent']}).")
    md += [f"Device: {dev['name']}. Medians of 9 interleaved reps, CUDA events on one stream. Hand-written: "
           "bench/gpu_hand.cu (a thread per word, its block found by division). " + peer, "",
           "### Vector sweep (stride = 2 x block), device to device", "", "![GPU vector sweep](gpu_vector.png)", "",
           "| payload | block | pack of copy | unpack of copy | cudaMemcpy2DAsync of copy | pack / 2D | "
           "per-block cudaMemcpyAsync us | pack vs per-block | pack to pinned / D2H copy | to pageable: kernels / DMA time | "
           "general / targeted time | hand-written pack / unpack of copy | Yaksa time / ddtkit time, pack / unpack |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in vec:
        n = r["payload"] / r["block"]
        per_block_total = r["per_block_s"] * n
        md.append(f"| {size(r['payload'])} | {size(r['block'])} | {r['memcpy_s'] / r['pack_s']:.2f} | "
                  f"{r['memcpy_s'] / r['unpack_s']:.2f} | {r['memcpy_s'] / r['memcpy2d_s']:.2f} | "
                  f"{r['memcpy2d_s'] / r['pack_s']:.2f}x | {r['per_block_s'] * 1e6:.2f} | "
                  f"{per_block_total / r['pack_s']:.0f}x | {r['d2h_s'] / r['pack_pinned_s']:.2f} | "
                  f"{r.get('pageable_kernel_s', float('nan')) / r.get('pageable_dma_s', float('nan')):.2f} | "
                  f"{general(r)} | {hand(r)} | {yaksa(r)} |")
    md.append("")
    lay = [r for r in rows if r.get("suite") == "layouts"]
    if lay:
        md += ["### Subarray and indexed_block, 64 MiB, device to device", "",
               "A 2-D subarray (rows of `block` bytes out of rows of twice that: canonically a vector, the nest kernel); "
               "indexed_block at the vector's displacements in shuffled order (the list kernel, or a flat list where the "
               "canonical form cut it into segments); indexed_block_sorted: ascending, with a gap 8 B wider after every "
               "1,024th block, whose canonical form is a nest of two dimensions of 8-byte-aligned blocks (16-byte units "
               "moved in 8-byte typed words). General / targeted: "
               "the general kernel (`DDT_CUDA_GENERAL`, the tree seek) on the same layout over the targeted one's time "
               "(timed from 128 B blocks for the list: below, its table exceeds the layout cache).", "",
               "| layout | block | pack of copy | unpack of copy | general / targeted time | hand-written pack / unpack of copy | "
               "Yaksa time / ddtkit time, pack / unpack |",
               "|---|---|---|---|---|---|---|"]
        md += [f"| {r['layout']} | {size(r['block'])} | {r['memcpy_s'] / r['pack_s']:.2f} | "
               f"{r['memcpy_s'] / r['unpack_s']:.2f} | {general(r)} | {hand(r)} | {yaksa(r)} |" for r in lay]
        md.append("")
    big = [r for r in vec if r["payload"] == 64 * MIB] + lay

    def worst(pred, key="pack_s"):
        xs = [(min(r["memcpy_s"] / r["pack_s"], r["memcpy_s"] / r["unpack_s"]), r.get("layout", "vector")) for r in big
              if pred(r["block"])]
        return min(xs) if xs else None

    for label, pred, goal in (("blocks >= 512 B", lambda b: b >= 512, 0.9), ("128 B blocks", lambda b: b == 128, 0.85),
                              ("8 B blocks", lambda b: b == 8, 0.6)):
        w = worst(pred)
        targets.append((f"GPU 64 MiB vector, subarray, indexed_block, {label}: pack and unpack >= {goal} of device copy",
                        "n/a" if w is None else f"worst {w[0]:.2f} ({w[1]})", "", None if w is None else w[0] >= goal))
    gen = [(r["general_s"] / r["pack_s"], r.get("layout", "vector")) for r in big if r.get("general_s")]
    if gen:
        g = max(gen)
        targets.append(("GPU: general kernel within 1.25x of the targeted one (64 MiB)", f"worst {g[0]:.2f}x ({g[1]})", "",
                        g[0] <= 1.25))
    small = [r["per_block_s"] * r["payload"] / r["block"] / r["pack_s"] for r in vec if r["block"] < 1024]
    if small:
        targets.append(("GPU: >= 100x one cudaMemcpyAsync per block, blocks < 1 KiB", f"worst {min(small):.0f}x", "",
                        min(small) >= 100))
    vs2d = [r["memcpy2d_s"] / r["pack_s"] for r in vec]
    if vs2d:
        targets.append(("GPU: never slower than cudaMemcpy2DAsync", f"worst {min(vs2d):.2f}x", "", min(vs2d) >= 1.0))
    for r in rows:
        if r.get("suite") == "index12":
            md += ["### Index list of 12 B blocks (shuffled), 64 MiB payload", "",
                   f"pack {r['memcpy_s'] / r['pack_s']:.2f} of copy, unpack {r['memcpy_s'] / r['unpack_s']:.2f} of copy; "
                   f"the hand-written gather / scatter (a thread per 4-byte word) {hand(r)}; Yaksa {yaksa(r)}.", ""]
    dd = [r for r in rows if r.get("suite") == "ddtbench"]
    if dd:
        md += ["### DDTBench kernels on the device (single-array kernels)", "",
               "| kernel | params | bytes | pack of copy | unpack of copy |", "|---|---|---|---|---|"]
        md += [f"| {r['kernel']} | {r['params']} | {r['bytes']} | {r['memcpy_s'] / r['pack_s']:.2f} | "
               f"{r['memcpy_s'] / r['unpack_s']:.2f} |" for r in dd]
        md.append("")
    for r in rows:
        if r.get("suite") == "ipc" and "zero_copy_s" in r:
            ratio = r["pack_copy_unpack_s"] / r["zero_copy_s"]
            md += ["### Zero copy between two processes (CUDA IPC)", "",
                   f"{size(r['payload'])} vector of {r['block']} B blocks in another process's device memory: one kernel "
                   f"(`ddt_cuda_ipc_copy_async`) {r['zero_copy_s'] * 1e6:.0f} us, pack + copy + unpack "
                   f"{r['pack_copy_unpack_s'] * 1e6:.0f} us: {ratio:.2f}x.", ""]
            targets.append(("GPU: zero-copy IPC of a 64 MiB vector >= 1.8x pack + copy + unpack", f"{ratio:.2f}x", "",
                            ratio >= 1.8))
    for r in rows:
        if r.get("suite") == "host":
            md += ["### Host memory with the GPU layer on", "",
                   f"ddt_pack of a {r['bytes']} B vector between host buffers, per call: heap to heap "
                   f"{r['pack_heap_s'] * 1e9:.0f} ns (known host memory: no driver query), heap to a stack buffer "
                   f"{r['pack_stack_s'] * 1e9:.0f} ns (the driver asked about both); one cudaPointerGetAttributes "
                   f"{r['query_s'] * 1e9:.0f} ns.", ""]
    for r in rows:
        if r.get("suite") == "floor":
            ratio = r["pack_s"] / r["pack1_s"]
            md += ["### Launch floor", "",
                   f"1-byte cudaMemsetAsync + sync {r['memset1_s'] * 1e6:.1f} us, 1-byte pack + sync {r['pack1_s'] * 1e6:.1f} us, "
                   f"2 MiB pack ({r['block']} B blocks) + sync {r['pack_s'] * 1e6:.1f} us: {ratio:.2f}x the floor.", ""]
            targets.append(("GPU: 2 MiB pack within 2x of the launch floor", f"{ratio:.2f}x", "", ratio <= 2.0))
    return rows


def plots(out, rows):
    """gpu_vector.png: the vector sweep at 64 MiB (and 2 MiB), each method as a fraction of the
    device-to-device copy, beside issue 12's targets."""
    if not rows:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    vec = [r for r in rows if r.get("suite") == "vector"]
    if not vec:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, payload in zip(axes, (64 * MIB, 2 * MIB)):
        rs = sorted((r for r in vec if r["payload"] == payload), key=lambda r: r["block"])
        xs = [r["block"] for r in rs]
        for label, key in (("ddtkit pack", "pack_s"), ("ddtkit unpack", "unpack_s"), ("cudaMemcpy2DAsync", "memcpy2d_s")):
            ax.plot(xs, [r["memcpy_s"] / r[key] for r in rs], marker="o", label=label)
        ax.plot(xs, [r["memcpy_s"] / (r["per_block_s"] * r["payload"] / r["block"]) for r in rs], marker="x",
                label="cudaMemcpyAsync per block")
        if payload == 64 * MIB:
            ax.plot([8, 128, 512, 65536], [0.6, 0.85, 0.9, 0.9], color="gray", linestyle="--", drawstyle="steps-post",
                    label="target")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("block (B), stride 2 x block")
        ax.set_title(f"{size(payload)} payload")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("fraction of device-to-device copy")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "gpu_vector.png"), dpi=110)
    plt.close(fig)
