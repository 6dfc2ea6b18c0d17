#!/usr/bin/env python3
"""bench/plot_spmv.py SPMV_BENCH_JSON OUT_PNG: grouped bars of GB/s (minimum bytes) per matrix class for
every algorithm and cuSPARSE ALG1/ALG2, from `spmv bench`'s JSON. Written to a temp name, then renamed."""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_spmv.py SPMV_BENCH_JSON OUT_PNG")
    d = json.load(open(sys.argv[1]))
    classes = [c["name"] for c in d["classes"]]
    # The main algorithms and the peers; --explore's forced vector widths (vector_w*) stay in the JSON/CSV.
    # stencil runs only where it applies: a class without it gets no bar.
    names = []
    for c in d["classes"]:
        for t in c["timings"]:
            if not t["algorithm"].startswith("vector_w") and t["algorithm"] not in names:
                names.append(t["algorithm"])
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(13, 5.5))
    for k, n in enumerate(names):
        gbs = [next((t["gb_per_s"] for t in c["timings"] if t["algorithm"] == n), 0) for c in d["classes"]]
        hatch = "//" if n.startswith("cusparse") else None
        ax.bar([i + (k - len(names) / 2 + 0.5) * width for i in range(len(classes))], gbs, width, label=n, hatch=hatch)
    ax.axhline(d["copy_ceiling_gb_per_s"], color="k", linestyle="--", linewidth=1,
               label=f"copy ceiling {d['copy_ceiling_gb_per_s']:.0f} GB/s")
    ax.set_xticks(range(len(classes)))
    ax.set_xticklabels(classes)
    ax.set_ylabel("GB/s of CSR minimum bytes (values + col_idx + row_ptr + x + y)\n(stencil reads no col_idx)")
    ax.set_title(f"SpMV y = A x, float / int32, {d['gpu']}, median of {d['repeat']} calls")
    ax.legend(ncol=3, fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    tmp = sys.argv[2] + ".partial.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
