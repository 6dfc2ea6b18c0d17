#!/usr/bin/env python3
"""bench/plot_reduce.py BENCH_JSON OUT_PNG: GB/s vs N, ours vs CUB, one panel per operation, from the
JSON that `reduce bench --json` writes. Solid: same input buffer every call (as the ANCHORS figures);
dashed: rotating buffers (reads from DRAM), where measured. Segmented cases appear as bars."""
import json
import math
import os
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: plot_reduce.py BENCH_JSON OUT_PNG", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_reduce.py: matplotlib not available; no plot written", file=sys.stderr)
        return 0
    with open(sys.argv[1]) as f:
        bench = json.load(f)
    results = bench["results"]
    ops = []
    for r in results:
        if not r["op"].startswith("segmented") and r["op"] not in ops:
            ops.append(r["op"])
    seg = [r for r in results if r["op"].startswith("segmented")]
    panels = len(ops) + (1 if seg else 0)
    cols = 3
    rows = math.ceil(panels / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.8 * rows), squeeze=False)
    ceiling = bench["ceiling"]["memcpy_d2d_gbps_read_plus_write"]
    for i, op in enumerate(ops):
        ax = axes[i // cols][i % cols]
        rs = sorted((r for r in results if r["op"] == op), key=lambda r: r["n"])
        n = [r["n"] for r in rs]
        for impl, color, label in (("ours", "tab:blue", "libreduce"), ("cub", "tab:orange", "CUB")):
            ax.plot(n, [r[impl]["gbps_plain_same"] for r in rs], "-o", color=color, ms=3, label=f"{label} (same buffer)")
            rot = [(r["n"], r[impl]["gbps_plain_rotating"]) for r in rs if "gbps_plain_rotating" in r[impl]]
            if rot:
                ax.plot(*zip(*rot), "--", color=color, alpha=0.6, label=f"{label} (rotating)")
        ax.axhline(ceiling, color="gray", lw=0.8, ls=":", label="d2d copy (r+w)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{op} (float)")
        ax.set_xlabel("N")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="both", alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    if seg:
        ax = axes[(panels - 1) // cols][(panels - 1) % cols]
        names = [r["op"].replace("segmented_", "") for r in seg]
        x = range(len(seg))
        ax.bar([i - 0.2 for i in x], [r["ours"]["gbps_plain_same"] for r in seg], 0.4, label="libreduce")
        ax.bar([i + 0.2 for i in x], [r["cub"]["gbps_plain_same"] for r in seg], 0.4, label="CUB")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names)
        ax.set_ylabel("GB/s")
        ax.set_title("segmented sum")
        ax.legend(fontsize=7)
    for j in range(panels, rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle(f"reduce bench: {bench['gpu']} ({bench['cub']})")
    fig.tight_layout()
    tmp = sys.argv[2] + ".partial.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, sys.argv[2])
    print(f"plot_reduce.py: wrote {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
