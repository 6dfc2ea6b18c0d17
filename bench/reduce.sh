#!/usr/bin/env bash
# bench/reduce.sh BUILD_DIR OUTDIR [--quick]
# Runs `reduce ladder` and `reduce bench` on the present GPU, writes into OUTDIR:
#   reduce-ladder.json/.csv, reduce-bench.json/.csv, reduce-bench.png (if matplotlib is present),
#   reduce-ladder.txt, reduce-bench.txt (the printed tables) and reduce.headline.txt (a few lines for
#   scripts/gpu-check's summary: GPU, ceilings, key ratios, targets PASS/MISS).
# Exits non-zero when either command fails (a validation failure included).
set -euo pipefail
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: bench/reduce.sh BUILD_DIR OUTDIR [--quick]" >&2; exit 2; }
build=$1
mkdir -p "$2" && out=$(cd "$2" && pwd)
quick=()
if [ $# -eq 3 ]; then
  [ "$3" = "--quick" ] || { echo "bench/reduce.sh: unknown option $3" >&2; exit 2; }
  quick=(--quick)
fi
here=$(cd "$(dirname "$0")" && pwd)
app="$build/apps/reduce/reduce"
[ -x "$app" ] || { echo "bench/reduce.sh: $app not found or not executable (build target reduce_app first)" >&2; exit 1; }

echo "== reduce ladder ${quick[*]:-}"
"$app" ladder "${quick[@]}" --json "$out/reduce-ladder.json" --csv "$out/reduce-ladder.csv" | tee "$out/reduce-ladder.txt"
echo "== reduce bench ${quick[*]:-}"
"$app" bench "${quick[@]}" --json "$out/reduce-bench.json" --csv "$out/reduce-bench.csv" | tee "$out/reduce-bench.txt"

# The first python3 that has matplotlib (a pyenv shim may shadow the system one that has it).
plot_python=""
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then plot_python=$py; break; fi
done
if [ -n "$plot_python" ]; then
  "$plot_python" "$here/plot_reduce.py" "$out/reduce-bench.json" "$out/reduce-bench.png"
else
  echo "bench/reduce.sh: matplotlib not available; skipping reduce-bench.png"
fi

python3 - "$out/reduce-ladder.json" "$out/reduce-bench.json" >"$out/reduce.headline.txt.partial" <<'PY'
import json, sys
lad = json.load(open(sys.argv[1]))
ben = json.load(open(sys.argv[2]))
c = lad["ceilings"]
print(f"GPU: {ben['gpu']}  ({ben['cub']}{', quick' if ben['quick'] else ''})")
print(f"ceilings: d2d copy {ben['ceiling']['memcpy_d2d_gbps_read_plus_write']:.0f} GB/s (read+write); "
      f"CUB float sum 2^28 {c['cub_sum_float_read_gbps']:.0f} GB/s read")
for t in lad["tables"]:
    rows = {r["kernel"]: r for r in t["rows"]}
    best = max((r for r in t["rows"] if r["kernel"] != "cub_device_reduce_sum"), key=lambda r: r["gbps"])
    print(f"ladder {t['type']} n={t['n']}: {rows['serial']['time_us']:.0f} us serial -> best rung {best['kernel']} "
          f"{best['time_us']:.1f} us ({best['gbps']:.0f} GB/s, {best['cumulative_speedup']:.0f}x); "
          f"CUB {rows['cub_device_reduce_sum']['time_us']:.1f} us")
def row(op, n):
    for r in ben["results"]:
        if r["op"] == op and r["n"] == n:
            return r
for k in (10, 14, 20, 22, 28, 30):
    r = row("sum", 1 << k)
    if r:
        print(f"sum 2^{k}: ours {r['ours']['plain_same_us']:.2f} us vs CUB {r['cub']['plain_same_us']:.2f} us "
              f"= {r['ratio_ours_over_cub_plain']:.3f}x ({r['ours']['gbps_plain_same']:.0f} GB/s)")
for op in ("segmented_1M_tiny", "segmented_1000x100k"):
    for r in ben["results"]:
        if r["op"] == op:
            print(f"{op}: ours {r['ours']['plain_same_us']:.1f} us vs CUB {r['cub']['plain_same_us']:.1f} us")
for t in ben["targets"]:
    print(f"{'PASS' if t['pass'] else 'MISS'} {t['target']}: {t['value']}")
fl = ben.get("floor_probe", [])
if fl:
    print("floor probe (loads and block trees only, no cross-block step) vs CUB: " + ", ".join(
        f"2^{f['n'].bit_length() - 1} {f['ratio_probe_over_cub_plain']:.3f}x"
        + (f" (sum {row('sum', f['n'])['ratio_ours_over_cub_plain']:.3f}x)" if row('sum', f['n']) else "")
        for f in fl))
PY
mv "$out/reduce.headline.txt.partial" "$out/reduce.headline.txt"
cat "$out/reduce.headline.txt"
