#!/usr/bin/env bash
# bench/spmv.sh BUILD_DIR OUTDIR [--quick] [--explore] [--classes a,b]
# bench/spmv.sh BUILD_DIR OUTDIR [--quick] --corpus DIR|FILE [--corpus DIR|FILE]... [--corpus-generated]
# Runs `spmv bench` (the six ANCHORS matrix classes plus denserow, every algorithm and cuSPARSE ALG1/ALG2
# timed in the same run) into OUTDIR: spmv-bench.json (report: apps/README.md, "JSON reports"),
# spmv-bench.txt (the printed tables), spmv-bench-*.png (bench/plot.py, when matplotlib is present) and
# spmv.headline.txt for scripts/gpu-check: GPU name, per class automatic vs ALG1/ALG2 and GB/s, the
# geometric mean, PASS/MISS per target. Exits non-zero when the bench fails (a result outside its bound: 1).
# With --corpus / --corpus-generated it runs `spmv bench --corpus` instead: spmv-corpus.json, spmv-corpus.txt,
# spmv-corpus.png (automatic's time over ALG1's and over our best algorithm's, per matrix) and
# spmv-corpus.headline.txt (PASS/MISS of the two corpus targets, then each matrix where automatic loses).
set -euo pipefail
usage="usage: bench/spmv.sh BUILD_DIR OUTDIR [--quick] [--explore] [--classes a,b] [--corpus DIR|FILE]... [--corpus-generated]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
build=$1
mkdir -p "$2" && out=$(cd "$2" && pwd)
shift 2
opts=()
corpus=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick|--explore) opts+=("$1") ;;
    --classes) [ $# -ge 2 ] || { echo "bench/spmv.sh: --classes needs a list" >&2; exit 2; }; opts+=(--classes "$2"); shift ;;
    --corpus) [ $# -ge 2 ] || { echo "bench/spmv.sh: --corpus needs a directory or file" >&2; exit 2; }
              [ -e "$2" ] || { echo "bench/spmv.sh: --corpus $2: no such file or directory" >&2; exit 2; }
              corpus+=(--corpus "$2"); shift ;;
    --corpus-generated) corpus+=("$1") ;;
    *) echo "bench/spmv.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
here=$(cd "$(dirname "$0")" && pwd)
# The app's "wrote FILE" line names the report by its path inside OUTDIR: the kept .txt names no machine path.
relative_wrote() { sed "s|^wrote $out/|wrote |"; }
app="$build/apps/spmv/spmv"
[ -x "$app" ] || { echo "bench/spmv.sh: $app not found or not executable (build target spmv_app first)" >&2; exit 1; }

# The corpus: the two targets' PASS/MISS, then each matrix where automatic loses.
if [ ${#corpus[@]} -gt 0 ]; then
  "$app" bench "${opts[@]}" "${corpus[@]}" --json "$out/spmv-corpus.json" | relative_wrote | tee "$out/spmv-corpus.txt"
  python3 "$here/plot.py" "$out/spmv-corpus.json" --y _time_ratio --hline 1 --hline 1.1 --out "$out/spmv-corpus.png" \
    || echo "bench/spmv.sh: bench/plot.py failed: no corpus plot" >&2

  python3 - "$out/spmv-corpus.json" >"$out/spmv-corpus.headline.txt.partial" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d["results"]
t = res["targets"]
ms = res["matrices"]
n = len(ms)
gen = sum(1 for m in ms if m["generated"])
print(f"GPU: {d['device'].get('name', '?')}; {n} matrices ({n - gen} files, {gen} generated); float values, int32 "
      f"indices; median of {res['repeats']} calls; measured in {res['elapsed_s']:.0f} s")
worst1 = max(ms, key=lambda m: m["automatic_over_alg1_time_ratio"])
worstb = max(ms, key=lambda m: m["automatic_over_best_time_ratio"])
print(f"{'PASS' if t['automatic_not_slower_than_alg1_everywhere'] else 'MISS'} automatic never slower than cuSPARSE "
      f"ALG1: slower on {t['slower_than_alg1_count']} of {n} (worst {worst1['matrix']}: auto/ALG1 "
      f"{worst1['automatic_over_alg1_time_ratio']:.2f})")
print(f"{'PASS' if t['automatic_within_10_percent_of_best_everywhere'] else 'MISS'} automatic within 10% of our best "
      f"algorithm: beyond it on {t['beyond_10_percent_of_best_count']} of {n} (worst {worstb['matrix']}: auto/best "
      f"{worstb['automatic_over_best_time_ratio']:.2f}, best {worstb['best_algorithm']})")
print(f"{'ok' if t['all_within_bound'] else 'FAIL'} every result within its derived error bound")
for m in ms:
    if m["not_slower_than_alg1"] and m["within_10_percent_of_best"]:
        continue
    print(f"  loses on {m['matrix']} ({m['rows']} rows, {m['nnz']} entries): chose {m['automatic_choice']}, best "
          f"{m['best_algorithm']}; auto {m['automatic_time_us']:.1f} us, ALG1 {m['alg1_time_us']:.1f} us, best "
          f"{m['best_time_us']:.1f} us; auto/ALG1 {m['automatic_over_alg1_time_ratio']:.2f}, auto/best "
          f"{m['automatic_over_best_time_ratio']:.2f}")
PY
  mv "$out/spmv-corpus.headline.txt.partial" "$out/spmv-corpus.headline.txt"
  cat "$out/spmv-corpus.headline.txt"
  exit 0
fi

"$app" bench "${opts[@]}" --json "$out/spmv-bench.json" | relative_wrote | tee "$out/spmv-bench.txt"
python3 "$here/plot.py" "$out/spmv-bench.json" || echo "bench/spmv.sh: bench/plot.py failed: no plots" >&2

python3 - "$out/spmv-bench.json" >"$out/spmv.headline.txt.partial" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d["results"]
t = res["targets"]
print(f"GPU: {d['device'].get('name', '?')}; float values, int32 indices; median of {res['repeats']} calls; "
      f"copy ceiling {res['copy_ceiling_gb_per_s']:.0f} GB/s")
def timing(matrix, algorithm):
    return next(x for x in res["timings"] if x["matrix"] == matrix and x["algorithm"] == algorithm)
for c in res["matrices"]:
    auto, a1 = timing(c["matrix"], "automatic"), timing(c["matrix"], "cusparse_alg1")
    r1, r2 = c["automatic_vs_alg1_speedup_ratio"], c["automatic_vs_alg2_speedup_ratio"]
    tag = ("PASS" if r1 > 1 else "MISS") if c["anchor"] else "----"
    print(f"{tag} {c['matrix']:<11} automatic {auto['time_us']:8.1f} us {auto['gb_per_s']:6.0f} GB/s | "
          f"ALG1 {a1['time_us']:8.1f} us -> {r1:.2f}x, vs ALG2 {r2:.2f}x | {c['automatic_plan']}")
    if c["automatic_plan"].startswith("stencil"):
        csr = timing(c["matrix"], c["automatic_csr_choice"])
        print(f"     {'':<11} (stencil reads no col_idx: {c['stencil_traffic_bytes'] / 1e6:.1f} MB per call against "
              f"CSR's {c['min_traffic_bytes'] / 1e6:.1f}, {c['stencil_traffic_bytes'] / (auto['time_us'] * 1e3):.0f} "
              f"GB/s of its own bytes; best CSR kernel {c['automatic_csr_choice']}: "
              f"{a1['time_us'] / csr['time_us']:.2f}x ALG1)")
print(f"{'PASS' if t['geomean_target_met'] else 'MISS'} geomean ALG1/automatic {t['geomean_vs_alg1_speedup_ratio']:.3f}x "
      f"(target 1.25x; automatic held to the CSR kernels: {t['geomean_vs_alg1_csr_kernels_only_speedup_ratio']:.3f}x)")
print(f"{'PASS' if t['geomean_stretch_target_met'] else 'MISS'} geomean ALG1/automatic {t['geomean_vs_alg1_speedup_ratio']:.3f}x "
      f"(target {t['geomean_stretch_target_ratio']:.2f}x, real inputs)")
print(f"{'PASS' if t['laplace_bandwidth_target_met'] else 'MISS'} Laplacians >= {res['laplace_target_gb_per_s']:.0f} GB/s")
print(f"{'ok' if t['all_within_bound'] else 'FAIL'} every result within its derived error bound")
PY
mv "$out/spmv.headline.txt.partial" "$out/spmv.headline.txt"
cat "$out/spmv.headline.txt"
