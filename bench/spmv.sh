#!/usr/bin/env bash
# bench/spmv.sh BUILD_DIR OUTDIR [--quick] [--explore] [--classes a,b]
# Runs `spmv bench` (the six ANCHORS matrix classes plus denserow, every algorithm and cuSPARSE ALG1/ALG2
# timed in the same run) into OUTDIR, then writes OUTDIR/spmv.headline.txt for scripts/gpu-check:
# GPU name, per class automatic vs ALG1/ALG2 and GB/s, the geometric mean, PASS/MISS per target.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/spmv.sh BUILD_DIR OUTDIR [--quick]" >&2; exit 2; }
build=$1
out=$2
shift 2
quick=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick|--explore) quick+=("$1") ;;
    --classes) [ $# -ge 2 ] || { echo "bench/spmv.sh: --classes needs a list" >&2; exit 2; }; quick+=(--classes "$2"); shift ;;
    *) echo "bench/spmv.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
"$build/apps/spmv/spmv" bench "${quick[@]}" --out "$out" | tee "$out/spmv-bench.txt"
python3 - "$out/spmv-bench.json" >"$out/spmv.headline.txt.partial" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["targets"]
print(f"GPU: {d['gpu']}; float values, int32 indices; median of {d['repeat']} calls; "
      f"copy ceiling {d['copy_ceiling_gb_per_s']:.0f} GB/s")
for c in d["classes"]:
    auto = next(x for x in c["timings"] if x["algorithm"] == "automatic")
    a1 = next(x for x in c["timings"] if x["algorithm"] == "cusparse_alg1")
    tag = ("PASS" if c["automatic_vs_alg1"] > 1 else "MISS") if c["anchor"] else "----"
    print(f"{tag} {c['name']:<11} automatic {auto['median_us']:8.1f} us {auto['gb_per_s']:6.0f} GB/s | "
          f"ALG1 {a1['median_us']:8.1f} us -> {c['automatic_vs_alg1']:.2f}x, vs ALG2 {c['automatic_vs_alg2']:.2f}x "
          f"| {c['automatic_plan']}")
    if c["automatic_plan"].startswith("stencil"):
        print(f"     {'':<11} (stencil reads no col_idx: {c['stencil_bytes'] / 1e6:.1f} MB per call against CSR's "
              f"{c['min_bytes'] / 1e6:.1f}, {c['stencil_bytes'] / (auto['median_us'] * 1e3):.0f} GB/s of its own bytes; "
              f"best CSR kernel {c['automatic_csr_choice']}: "
              f"{a1['median_us'] / next(x for x in c['timings'] if x['algorithm'] == c['automatic_csr_choice'])['median_us']:.2f}x ALG1)")
print(f"{'PASS' if t['geomean_target_met'] else 'MISS'} geomean ALG1/automatic {t['geomean_vs_alg1']:.3f}x (target 1.25x; "
      f"automatic held to the CSR kernels: {t['geomean_vs_alg1_csr_kernels_only']:.3f}x)")
print(f"{'PASS' if t['laplace_bandwidth_target_met'] else 'MISS'} Laplacians >= {d['laplace_target_gb_per_s']:.0f} GB/s")
print(f"{'ok' if t['all_within_bound'] else 'FAIL'} every result within its derived error bound")
PY
mv "$out/spmv.headline.txt.partial" "$out/spmv.headline.txt"
cat "$out/spmv.headline.txt"
