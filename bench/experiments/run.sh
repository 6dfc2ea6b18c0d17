#!/usr/bin/env bash
# bench/experiments/run.sh OUTDIR [BUILD_DIR]
# Builds the kernel-variant studies (GPUKIT_BUILD_EXPERIMENTS=ON, Release, the present GPU's arch) and
# runs each one on the present GPU, then profiles the SpMV kernels with Nsight Compute when `ncu` is
# there. Logs: OUTDIR/<experiment>.txt, OUTDIR/ncu-spmv.{csv,txt}; OUTDIR/experiments.headline.txt holds
# the lines scripts/gpu-check puts in its summary. Exits non-zero if a study fails its checks.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: bench/experiments/run.sh OUTDIR [BUILD_DIR]" >&2; exit 2; }
mkdir -p "$1" && out=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build-experiments}
exps=(launch_floor reduce_large reduce_small reduce_medium spmv_variants spmv_cluster spmv_windowed spmv_column_blocks cg_l2_window host_copies)
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
[ -n "$arch" ] || { echo "run.sh: no GPU (nvidia-smi found none)" >&2; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DGPUKIT_BUILD_EXPERIMENTS=ON -DGPUKIT_BUILD_TESTS=OFF >"$out/build.txt" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target "${exps[@]}" >>"$out/build.txt" 2>&1 ||
  { tail -30 "$out/build.txt"; exit 1; }
# cg_l2_window: 128^3 and 160^3, p in L2 off then on (solve::options::p_in_l2).
cg_l2_sizes() {
  local rc=0 n p
  for n in 128 160; do for p in 1 2; do "$1" "$n" 0 "$p" || rc=1; done; done
  return "$rc"
}
status=0
for exp in "${exps[@]}"; do
  [ -x "$build/bench/experiments/$exp" ] || continue
  echo "== $exp"
  args=()
  [ "$exp" = reduce_large ] && args=("$out/reduce_large.csv")
  if [ "$exp" = cg_l2_window ]; then
    cg_l2_sizes "$build/bench/experiments/$exp" 2>&1 | tee "$out/$exp.txt"
  else
    "$build/bench/experiments/$exp" "${args[@]}" 2>&1 | tee "$out/$exp.txt"
  fi
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
if [ -z "${NO_NCU:-}" ] && command -v ncu >/dev/null; then
  echo "== ncu: SpMV kernels and cuSPARSE on random16, powerlaw, random1000"
  metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
  metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
  metrics+=,lts__t_requests_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct
  metrics+=,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active
  metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
  metrics+=,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__inst_executed.sum
  timeout 240 ncu --clock-control none --print-units base --metrics "$metrics" --csv --page raw \
    "$build/bench/experiments/spmv_variants" --once --classes random16,powerlaw,random1000 \
    >"$out/ncu-spmv.csv" 2>"$out/ncu-spmv.err" || echo "ncu failed or timed out (see ncu-spmv.err)"
  python3 "$root/bench/experiments/ncu_table.py" "$out/ncu-spmv.csv" >"$out/ncu-spmv.txt" || true
  cat "$out/ncu-spmv.txt"
  echo "== ncu: the windowed kernels on random16"
  timeout 120 ncu --clock-control none --print-units base --metrics "$metrics" --csv --page raw -k regex:windowed \
    "$build/bench/experiments/spmv_windowed" --once >"$out/ncu-windowed.csv" 2>"$out/ncu-windowed.err" ||
    echo "ncu failed or timed out (see ncu-windowed.err)"
  python3 "$root/bench/experiments/ncu_table.py" "$out/ncu-windowed.csv" >"$out/ncu-windowed.txt" || true
  cat "$out/ncu-windowed.txt"
fi
{
  # The figures the READMEs quote from these studies: the library's rows against the peer's.
  grep -E '^GPU' "$out/reduce_small.txt" 2>/dev/null | head -1
  echo "launch_floor (host us per call, plain us, graph us; the empty kernel is the floor of any one launch):"
  grep -E '^(events only|empty kernel <<<1, 512>>>|empty kernel, driver|two empty)' "$out/launch_floor.txt" 2>/dev/null | sed 's/^/  /'
  grep -E '^2\^[0-9]+ +(CUB DeviceReduce::Sum|library reduce::sum|compact (block 256t|ticket 512t x4 \(previous))' "$out/launch_floor.txt" 2>/dev/null | sed 's/^/  /'
  grep -E '^RESULT' "$out/launch_floor.txt" 2>/dev/null | sed 's/^/  launch_floor /'

  echo "reduce_small (plain us, graph us, ratio to CUB):"
  grep -E '^(CUB DeviceReduce::Sum|library default) ' "$out/reduce_small.txt" 2>/dev/null | sed 's/^/  /'
  echo "reduce_medium (plain us, graph us, ratio to CUB: the library against its previous medium shape):"
  grep -E '^(CUB DeviceReduce::Sum|library default|library kernel, previous shape) ' "$out/reduce_medium.txt" 2>/dev/null | sed 's/^/  /'
  echo "reduce_large (the library's rows and CUB's: sum at 2^26, 2^28, 2^30; segmented 1000 x 100k):"
  grep -E '^(cub::|libreduce)' "$out/reduce_large.txt" 2>/dev/null | sed 's/^/  /'
  echo "reduce_large, argmax and min (us, ratio to CUB's ArgMax / Min; the library's call and 256-thread blocks):"
  grep -E '^(CUB ArgMax / Min|library launch_default|t256 u4  ) ' "$out/reduce_large.txt" 2>/dev/null | sed 's/^/  /'
  echo "spmv_variants:"
  grep -E 'cuSPARSE ALG1|scalar \(library|stencil \(library|stencil( unroll 8)?, 8 blocks|stencil scan, 8|stencil staged|blocks/SM \(before\)|W=4 entries=cached x=ldg|adaptive entries=once x=ldg( min 4|  )|block_per_row (128 x=cg  |256 x=cg grid [0-9]+ \(library)|^RESULT' \
    "$out/spmv_variants.txt" 2>/dev/null | sed 's/^/  /'
  echo "spmv_cluster (random gathers from L2 and from a cluster's distributed shared memory; the prototype SpMV):"
  grep -E 'G gathers/s|cuSPARSE ALG1|library automatic|^  cluster|^RESULT' "$out/spmv_cluster.txt" 2>/dev/null | sed 's/^/  /'
  echo "spmv_windowed (entries in column-window order, so an SM's L1 serves repeated gathers of x):"
  grep -E 'cuSPARSE ALG1|library|match_any|U=8, free|^RESULT' "$out/spmv_windowed.txt" 2>/dev/null | sed 's/^/  /'
  echo "spmv_column_blocks (one range of columns per SM, x's slice in shared memory, a partial per range and row):"
  grep -E 'cols, |cuSPARSE ALG1|library automatic|132 of .*1 lanes|^RESULT' "$out/spmv_column_blocks.txt" 2>/dev/null | sed 's/^/  /'
  echo "host_copies (WSM5's CONUS copies over the host link, pinned; ms):"
  grep -E '^(up|down|both|chunked|pipeline 6|check)' "$out/host_copies.txt" 2>/dev/null | sed 's/^/  /'
  echo "cg_l2_window (our cg per iteration, p in L2 off = policy 1, on = policy 2):"
  grep -E 'us/it' "$out/cg_l2_window.txt" 2>/dev/null | sed 's/^/  /'
  if [ -s "$out/ncu-spmv.txt" ]; then
    echo "ncu (L2 read sectors decide the gather-bound classes):"
    sed 's/^/  /' "$out/ncu-spmv.txt"
  fi
  if [ -s "$out/ncu-windowed.txt" ]; then
    echo "ncu, windowed kernels on random16:"
    sed 's/^/  /' "$out/ncu-windowed.txt"
  fi
  for exp in "${exps[@]}"; do
    grep -qE 'FAIL|MISMATCH|OUT OF BOUND|NOT DETERMINISTIC' "$out/$exp.txt" 2>/dev/null && echo "  $exp: FAILED a check (see $exp.txt)"
  done
  [ $status -eq 0 ] && echo "experiments: every check passed" || echo "experiments: FAILED"
} >"$out/experiments.headline.txt"
exit $status
