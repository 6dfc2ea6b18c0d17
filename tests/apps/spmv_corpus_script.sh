#!/usr/bin/env bash
# tests/apps/spmv_corpus_script.sh WORKDIR: bench/spmv.sh --corpus on the CPU, with a stand-in for the
# spmv app that writes a two-matrix corpus report (automatic wins on one, loses on the other): the
# headline's PASS/MISS lines, the loss line, the plot and the script's options are checked.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$1
rm -rf "$work" && mkdir -p "$work/build/apps/spmv" "$work/out" "$work/d"
cat >"$work/build/apps/spmv/spmv" <<'STUB'
#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
assert args[0] == "bench" and "--corpus" in args and "--corpus-generated" in args and "--quick" in args, args
def rec(name, auto, alg1, best, gen):
    return {"matrix": name, "anchor": False, "rows": 1000, "cols": 1000, "nnz": 5000, "automatic_plan": "scalar",
            "automatic_choice": "scalar", "source": name, "generated": gen, "best_algorithm": "vector",
            "best_time_us": best, "automatic_time_us": auto, "alg1_time_us": alg1,
            "automatic_over_alg1_time_ratio": auto / alg1, "automatic_over_best_time_ratio": auto / best,
            "automatic_vs_alg1_speedup_ratio": alg1 / auto, "not_slower_than_alg1": auto <= alg1,
            "within_10_percent_of_best": auto <= 1.1 * best, "all_within_bound": True}
ms = [rec("a.mtx", 5.0, 6.0, 5.0, False), rec("banded_k1_1k", 9.0, 6.0, 4.0, True)]
report = {"schema_version": 1, "tool": "spmv", "command": "bench", "version": "0", "git_commit": "0",
          "device": {"backend": "cuda", "name": "stand-in"}, "host": {"name": "h", "cpu_threads": 1},
          "timestamp": "2026-01-01T00:00:00Z", "inputs": {"corpus": ["d"], "corpus_generated": True},
          "results": {"warmup_calls_count": 3, "repeats": 25, "elapsed_s": 1.0, "matrices": ms,
                      "timings": [{"matrix": m["matrix"], "algorithm": "automatic", "time_us": m["automatic_time_us"]} for m in ms],
                      "targets": {"automatic_not_slower_than_alg1_everywhere": False,
                                  "automatic_within_10_percent_of_best_everywhere": False,
                                  "slower_than_alg1_count": 1, "beyond_10_percent_of_best_count": 1,
                                  "worst_automatic_over_alg1_time_ratio": 1.5, "worst_automatic_over_best_time_ratio": 2.25,
                                  "all_within_bound": True}}}
json.dump(report, open(args[args.index("--json") + 1], "w"))
print("table")
print("\nwrote " + args[args.index("--json") + 1])
STUB
chmod +x "$work/build/apps/spmv/spmv"
(cd "$work" && bash "$root/bench/spmv.sh" build out --quick --corpus d --corpus-generated) >"$work/log" 2>&1 \
  || { cat "$work/log"; echo "FAIL: bench/spmv.sh --corpus exited non-zero"; exit 1; }
h="$work/out/spmv-corpus.headline.txt"
for want in "^MISS automatic never slower than cuSPARSE ALG1: slower on 1 of 2 \(worst banded_k1_1k: auto/ALG1 1.50\)" \
            "^MISS automatic within 10% of our best algorithm: beyond it on 1 of 2 \(worst banded_k1_1k: auto/best 2.25" \
            "^ok every result" "loses on banded_k1_1k .*auto/ALG1 1.50, auto/best 2.25" "1 files, 1 generated"; do
  grep -Eq "$want" "$h" || { cat "$h"; echo "FAIL: the headline lacks /$want/"; exit 1; }
done
! grep -q "loses on a.mtx" "$h" || { echo "FAIL: a.mtx is listed as a loss"; exit 1; }
[ -e "$work/out/spmv-corpus.txt" ] || { echo "FAIL: no spmv-corpus.txt"; exit 1; }
grep -qx "wrote spmv-corpus.json" "$work/out/spmv-corpus.txt" || { cat "$work/out/spmv-corpus.txt"; echo "FAIL: the wrote line names a path"; exit 1; }
if python3 -c 'import matplotlib' 2>/dev/null || /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  [ "$(head -c 4 "$work/out/spmv-corpus.png" | od -An -c | tr -d ' ')" = "211PNG" ] || { echo "FAIL: no spmv-corpus.png"; exit 1; }
fi
ls "$work/out" | grep -q partial && { echo "FAIL: temporary left"; exit 1; }
if bash "$root/bench/spmv.sh" "$work/build" "$work/out" --corpus 2>/dev/null; then echo "FAIL: --corpus without a value accepted"; exit 1; fi
rc=0
bash "$root/bench/spmv.sh" "$work/build" "$work/out" --corpus "$work/missing" 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q "missing: no such file or directory" "$work/err" || { cat "$work/err"; echo "FAIL: a missing corpus exited $rc"; exit 1; }
echo "PASS"
