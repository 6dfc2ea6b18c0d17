#!/usr/bin/env bash
# bench/reduce.sh BUILD_DIR OUTDIR [--quick]
# Runs `reduce ladder` and `reduce bench` on the present GPU, writes into OUTDIR:
#   reduce-ladder.json, reduce-bench.json (reports: apps/README.md, "JSON reports"),
#   reduce-*.png (bench/plot.py, when matplotlib is present), reduce-ladder.txt, reduce-bench.txt (the
#   printed tables) and reduce.headline.txt (a few lines for scripts/gpu-check's summary: GPU, ceilings,
#   key ratios, targets PASS/MISS).
# Exits non-zero when either command fails (a validation failure included: exit 1).
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
"$app" ladder "${quick[@]}" --json "$out/reduce-ladder.json" | tee "$out/reduce-ladder.txt"
echo "== reduce bench ${quick[*]:-}"
"$app" bench "${quick[@]}" --json "$out/reduce-bench.json" | tee "$out/reduce-bench.txt"

python3 "$here/plot.py" "$out/reduce-ladder.json" "$out/reduce-bench.json" || echo "bench/reduce.sh: bench/plot.py failed: no plots" >&2

python3 - "$out/reduce-ladder.json" "$out/reduce-bench.json" >"$out/reduce.headline.txt.partial" <<'PY'
import json, sys
lad = json.load(open(sys.argv[1]))
ben = json.load(open(sys.argv[2]))
c = lad["results"]["ceilings"]
b = ben["results"]
print(f"GPU: {ben['device'].get('name', '?')}  ({ben['inputs']['cub']}{', quick' if ben['inputs']['quick'] else ''})")
print(f"ceilings: d2d copy {b['copy_read_plus_write_gb_per_s']:.0f} GB/s (read+write); "
      f"CUB float sum 2^28 {c['cub_sum_float_read_gb_per_s']:.0f} GB/s read")
for t in dict.fromkeys(r["type"] for r in lad["results"]["rows"]):
    rows = {r["kernel"]: r for r in lad["results"]["rows"] if r["type"] == t}
    best = max((r for r in rows.values() if r["kernel"] != "cub_device_reduce_sum"), key=lambda r: r["gb_per_s"])
    print(f"ladder {t} n={best['n']}: {rows['serial']['time_us']:.0f} us serial -> best rung {best['kernel']} "
          f"{best['time_us']:.1f} us ({best['gb_per_s']:.0f} GB/s, {best['cumulative_speedup_ratio']:.0f}x); "
          f"CUB {rows['cub_device_reduce_sum']['time_us']:.1f} us")
def row(op, n):
    return next((r for r in b["sizes"] if r["op"] == op and r["n"] == n), None)
for k in (10, 14, 20, 22, 28, 30):
    r = row("sum", 1 << k)
    if r:
        print(f"sum 2^{k}: ours {r['ours_plain_us']:.2f} us vs CUB {r['cub_plain_us']:.2f} us "
              f"= {r['ours_over_cub_plain_ratio']:.3f}x ({r['ours_gb_per_s']:.0f} GB/s)")
for r in b["segmented"]:
    print(f"{r['op']}: ours {r['ours_plain_us']:.1f} us vs CUB {r['cub_plain_us']:.1f} us")
for t in b["targets"]:
    print(f"{'PASS' if t['pass'] else 'MISS'} {t['target']}: {t['value']}")
fl = b.get("floor_probe", [])
if fl:
    print("floor probe (loads and block trees only, no cross-block step) vs CUB: " + ", ".join(
        f"2^{f['n'].bit_length() - 1} {f['probe_over_cub_plain_ratio']:.3f}x"
        + (f" (sum {row('sum', f['n'])['ours_over_cub_plain_ratio']:.3f}x)" if row('sum', f['n']) else "")
        for f in fl))
PY
mv "$out/reduce.headline.txt.partial" "$out/reduce.headline.txt"
cat "$out/reduce.headline.txt"
