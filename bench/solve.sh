#!/usr/bin/env bash
# bench/solve.sh BUILD_DIR OUTDIR [--quick]
# Runs `solve bench` (our cg, pcg, pipecg and cg's reproducible mode against the textbook cuSPARSE + cuBLAS
# CG, its device-scalar form and Eigen's CG on all CPU threads, float, in the same run) into OUTDIR: solve-bench.json (report:
# apps/README.md, "JSON reports"), solve-bench.txt (the printed table), solve-bench-*.png (bench/plot.py,
# when matplotlib is present) and solve.headline.txt for scripts/gpu-check: GPU, per-iteration times and
# ratios at 160^3 and 64^3, and the issue's targets as PASS/MISS lines. --quick: 3 repeats instead of 7
# (under a minute on an H100). b is random in [-1, 1) (fixed seed); time to solution at rtol 1e-5 (2D Poisson
# 2048^2: 1e-4, see apps/solve/bench_command.cu). Exits 1 when one of our solves broke down, diverged or ran
# out of iterations (every row's status is in the table and the JSON; a peer's failure is only reported).
set -euo pipefail
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: bench/solve.sh BUILD_DIR OUTDIR [--quick]" >&2; exit 2; }
build=$1
mkdir -p "$2" && out=$(cd "$2" && pwd)
quick=()
if [ $# -eq 3 ]; then
  [ "$3" = "--quick" ] || { echo "bench/solve.sh: unknown option $3" >&2; exit 2; }
  quick=(--quick)
fi
here=$(cd "$(dirname "$0")" && pwd)
app="$build/apps/solve/solve"
[ -x "$app" ] || { echo "bench/solve.sh: $app not found or not executable (build target solve_app first)" >&2; exit 1; }

# The JSON is written before the app exits 1 for a failed solve of ours: the headline is still made, and the
# script exits with the app's code at the end (2, bad input: no JSON, stop here).
rc=0
"$app" bench "${quick[@]}" --json "$out/solve-bench.json" | tee "$out/solve-bench.txt" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || exit "$rc"
python3 "$here/plot.py" "$out/solve-bench.json" || echo "bench/solve.sh: bench/plot.py failed: no plots" >&2

python3 - "$out/solve-bench.json" >"$out/solve.headline.txt.partial" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
res = d["results"]
print(f"GPU: {d['device'].get('name', '?')}; float, b random; per iteration: median of {res['repeats']} x 200 "
      f"iterations; copy ceiling {res['copy_ceiling_gb_per_s']:.0f} GB/s{' (quick)' if d['inputs']['quick'] else ''}")
def row(p, s):
    return next(r for r in res["timings"] if r["problem"] == p and r["solver"] == s)
for p in dict.fromkeys(r["problem"] for r in res["timings"]):
    tb = row(p, "textbook")
    parts = []
    for r in (x for x in res["timings"] if x["problem"] == p):
        floor = f"{r['over_floor_ratio']:.2f}x floor" if "over_floor_ratio" in r else f"{r.get('cpu_threads_count')} CPU threads"
        solved = (f"{r['iterations']} it {r['time_to_solution_ms']:.1f} ms [{r['time_to_solution_min_ms']:.1f}.."
                  f"{r['time_to_solution_max_ms']:.1f}]") if "time_to_solution_ms" in r else "no solve to tolerance"
        parts.append(f"{r['solver']} {r['per_iteration_us']:.1f} us ({floor}, {solved}, {r.get('status', '?')})")
    print(f"{p}: " + "; ".join(parts))
for t in res["targets"]:
    print(f"{'PASS' if t['pass'] else 'MISS'} {t['target']}: {t['value']}")
PY
mv "$out/solve.headline.txt.partial" "$out/solve.headline.txt"
cat "$out/solve.headline.txt"
exit "$rc"
