#!/usr/bin/env python3
"""Reports where MPICH and Open MPI disagree with each other on the same random types.

Each oracle run writes one digest line per type: what that MPI answered for size, lb, extent,
true lb, true extent, and whether its MPI_Pack bytes matched the standard's. This script lines
the two runs up by type number and counts disagreements per field. It reports; it does not fail:
the MPIs' own disagreements are findings about them, not about ddtkit.
"""
import sys
from collections import Counter


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            rows[parts[0]] = dict(zip(parts[1::2], parts[2::2]))
    return rows


def main(a_path, b_path):
    a, b = load(a_path), load(b_path)
    common = sorted(set(a) & set(b), key=int)
    fields = Counter()
    differing = 0
    for key in common:
        diff = [f for f in a[key] if a[key][f] != b[key].get(f)]
        fields.update(diff)
        differing += bool(diff)
    print(f"MPICH vs Open MPI on {len(common)} random types built by both "
          f"({len(a) - len(common)} only in the first run, {len(b) - len(common)} only in the second): "
          f"{differing} disagree")
    for field, n in sorted(fields.items()):
        print(f"  {field}: {n} types")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
