#!/usr/bin/env bash
# bench/dist.sh BUILD_DIR OUTDIR [--quick]
# The distributed layer on every GPU of this machine, one rank per GPU (G >= 2 GPUs, mpiexec, a build with
# the distributed layer and NCCL; otherwise it says why on stderr and exits 0, writing nothing):
#   OUTDIR/dist-bench.json        `reduce bench-dist` under mpiexec -n G: libdist's dot and device
#                                 all-reduce against raw NCCL in the same run (+ dist-bench.txt)
#   OUTDIR/dist-solve-*.json      `solve run` reports, float, b random, no tolerance (a fixed iteration
#                                 count): cg and pipecg on 3D Poisson 256^3 on 1 and G GPUs (strong
#                                 scaling), cg on 128^3 on 1 GPU and on round(128 G^(1/3))^3 on G (weak),
#                                 reproducible cg on 256^3 on 1 and G GPUs (+ their residual histories)
#   OUTDIR/dist.headline.txt      for scripts/gpu-check: the per-iteration figures and the scale-out
#                                 issue's targets as PASS/MISS lines: strong scaling >= 1.8x on 2 GPUs, weak
#                                 scaling efficiency >= 90 %, our dot and all-reduce within 10 % of raw NCCL,
#                                 reproducible cg's history bitwise the same on 1 and G GPUs
# --quick: fewer iterations (100 at 256^3, 200 at 128^3) and `reduce bench-dist --quick`.
# Ranks are not bound to cores (--bind-to none): with OpenMPI's default binding for two ranks, one core per
# rank, NCCL's own threads share that core.
set -euo pipefail
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: bench/dist.sh BUILD_DIR OUTDIR [--quick]" >&2; exit 2; }
build=$1
mkdir -p "$2" && out=$(cd "$2" && pwd)
quick=()
if [ $# -eq 3 ]; then
  [ "$3" = "--quick" ] || { echo "bench/dist.sh: unknown option $3" >&2; exit 2; }
  quick=(--quick)
fi
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$gpus" -lt 2 ]; then echo "bench/dist.sh: $gpus GPU(s) here, 2 or more needed: skipped" >&2; exit 0; fi
command -v mpiexec >/dev/null || { echo "bench/dist.sh: mpiexec not found: skipped" >&2; exit 0; }
grep -q '^GPUKIT_DISTRIBUTED:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null ||
  { echo "bench/dist.sh: $build has no distributed layer (GPUKIT_DISTRIBUTED): skipped" >&2; exit 0; }
grep -q '^NCCL_LIBRARY:FILEPATH=.*nccl' "$build/CMakeCache.txt" ||
  { echo "bench/dist.sh: $build was configured without NCCL: skipped" >&2; exit 0; }
build=$(cd "$build" && pwd)
reduce="$build/apps/reduce/reduce"; solve="$build/apps/solve/solve"; spmv="$build/apps/spmv/spmv"
for a in "$reduce" "$solve" "$spmv"; do [ -x "$a" ] || { echo "bench/dist.sh: $a not built" >&2; exit 1; }; done
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpiexec -x NCCL_NVLS_ENABLE=0 --bind-to none)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"${mpi[@]}" -n "$gpus" "$reduce" bench-dist "${quick[@]}" --json "$out/dist-bench.json" | tee "$out/dist-bench.txt"

weak_n=$(python3 -c "print(round(128 * $gpus ** (1 / 3)))")
for n in 128 256 "$weak_n"; do [ -e "$tmp/p$n.h5" ] || "$spmv" generate laplace3d "$tmp/p$n.h5" --n "$n" >/dev/null; done
it256=$([ ${#quick[@]} -gt 0 ] && echo 100 || echo 300)
it128=$([ ${#quick[@]} -gt 0 ] && echo 200 || echo 500)
run() {  # run LABEL RANKS N METHOD ITERATIONS [solve options...]
  local label=$1 ranks=$2 n=$3 method=$4 its=$5; shift 5
  # From the temporary folder, so that the reports name the matrix file and no machine path.
  (cd "$tmp" && "${mpi[@]}" -n "$ranks" "$solve" run "p$n.h5" --device gpu --precision float --method "$method" \
    --tol 0 --max-iterations "$its" --rhs random --json "$out/dist-solve-$label.json" "$@" >"$tmp/$label.log" 2>&1) ||
    [ $? -eq 1 ] || { echo "bench/dist.sh: $label failed:"; tail -3 "$tmp/$label.log"; exit 1; }  # 1: not converged (no tolerance)
}
run cg_256_1 1 256 cg "$it256"; run cg_256_$gpus "$gpus" 256 cg "$it256"
run pipecg_256_1 1 256 pipecg "$it256"; run pipecg_256_$gpus "$gpus" 256 pipecg "$it256"
run cg_128_1 1 128 cg "$it128"; run cg_${weak_n}_$gpus "$gpus" "$weak_n" cg "$it128"
run repro_256_1 1 256 cg 100 --reproducible --history "$out/dist-solve-repro_256_1.csv"
run repro_256_$gpus "$gpus" 256 cg 100 --reproducible --history "$out/dist-solve-repro_256_$gpus.csv"

python3 - "$out" "$gpus" "$weak_n" >"$out/dist.headline.txt.partial" <<'PY'
import filecmp, json, sys
out, g, weak = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def us(label):
    return json.load(open(f"{out}/dist-solve-{label}.json"))["results"]["per_iteration_us"]
bench = json.load(open(f"{out}/dist-bench.json"))
print(f"GPUs: {g} x {bench['device'].get('name', '?')}; float, b random, per iteration (solve run's per_iteration_us), "
      "mpiexec --bind-to none")
for m in ("cg", "pipecg"):
    one, many = us(f"{m}_256_1"), us(f"{m}_256_{g}")
    print(f"strong 256^3 {m}: 1 GPU {one:.1f} us, {g} GPUs {many:.1f} us ({one / many:.2f}x)")
w1, wg = us("cg_128_1"), us(f"cg_{weak}_{g}")
print(f"weak cg: 128^3 on 1 GPU {w1:.1f} us, {weak}^3 on {g} GPUs {wg:.1f} us ({100 * w1 / wg:.0f} % efficiency)")
same = filecmp.cmp(f"{out}/dist-solve-repro_256_1.csv", f"{out}/dist-solve-repro_256_{g}.csv", shallow=False)
targets = [(f"strong scaling cg 256^3 >= 1.8x on {g} GPUs (x)", us("cg_256_1") / us(f"cg_256_{g}"),
            us("cg_256_1") / us(f"cg_256_{g}") >= 1.8),
           (f"weak scaling cg 128^3 per GPU >= 90 % efficiency (%)", 100 * w1 / wg, w1 / wg >= 0.9)]
for t in bench["results"]["targets"]:
    targets.append((t["target"], float(t["value"]), t["pass"]))
targets.append((f"reproducible cg 256^3 history bitwise the same on 1 and {g} GPUs", 1.0 if same else 0.0, same))
for name, value, ok in targets:
    print(f"{'PASS' if ok else 'MISS'} {name}: {value:.3f}")
PY
mv "$out/dist.headline.txt.partial" "$out/dist.headline.txt"
cat "$out/dist.headline.txt"
