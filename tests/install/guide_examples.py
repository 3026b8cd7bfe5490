#!/usr/bin/env python3
"""Compiles and runs every C program of a Markdown document (docs/guide.md), so that its
examples stay true: each ```c block is a whole program, built against the public headers and
the shared library, and must exit 0 (the programs check their own results). A program that
calls ddt_comm_init runs under `ddtkit run -n 2`. Fails, naming the block and its first line
in the document, on a block that does not build or run, or on a document with no programs."""
import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys


def blocks(text):
    """(line number, code) of every ```c block."""
    out = []
    for m in re.finditer(r"^```c[ \t]*\n(.*?)^```[ \t]*$", text, re.S | re.M):
        out.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--doc", required=True, type=pathlib.Path)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--flags", default="", help="extra compile and link flags (sanitizers)")
    ap.add_argument("--include", required=True)
    ap.add_argument("--lib", required=True, help="libddtkit.so to link")
    ap.add_argument("--ddtkit", required=True, help="the ddtkit command, for `ddtkit run`")
    ap.add_argument("--work", required=True, type=pathlib.Path)
    args = ap.parse_args()

    found = blocks(args.doc.read_text())
    if not found:
        print(f"{args.doc}: no ```c blocks")
        return 1
    shutil.rmtree(args.work, ignore_errors=True)  # no program of an earlier run is left to pass
    args.work.mkdir(parents=True)
    libdir = str(pathlib.Path(args.lib).resolve().parent)
    failures = 0
    for line, code in found:
        name = f"{args.doc.name}:{line}"
        if "int main" not in code:
            print(f"{name}: not a whole program (every C block of the guide is one)")
            failures += 1
            continue
        src = args.work / f"example_{line}.c"
        exe = args.work / f"example_{line}"
        src.write_text(code)
        cmd = [args.cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *shlex.split(args.flags),
               "-I", args.include, str(src), args.lib, f"-Wl,-rpath,{libdir}", "-o", str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: does not build:\n{' '.join(cmd)}\n{r.stderr}")
            failures += 1
            continue
        run = [args.ddtkit, "run", "-n", "2", str(exe)] if "ddt_comm_init" in code else [str(exe)]
        r = subprocess.run(run, capture_output=True, text=True, timeout=120, env=os.environ)
        if r.returncode != 0:
            print(f"{name}: exit status {r.returncode}\n{r.stdout}{r.stderr}")
            failures += 1
            continue
        print(f"{name}: ok{' (ddtkit run -n 2)' if len(run) > 1 else ''}")
    print(f"{len(found) - failures} of {len(found)} programs of {args.doc} built and ran")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
