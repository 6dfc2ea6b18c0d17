#!/usr/bin/env bash
# bench/wsm5.sh BUILD_DIR OUTDIR [--quick]: WSM5 on the CONUS 12 km domain size (433 x 308 x 35,
# dt = 72 s), generated into a temporary directory (never committed): every variant, checked against the
# CPU reference, JSON report + a headline text file.
#   OUTDIR/wsm5-bench.json     `wsm5 run --json` report
#   OUTDIR/wsm5-bench.log      its text output
#   OUTDIR/wsm5.headline.txt   GPU, ms per call per variant without/with transfers, speed-ups, fraction of
#                              the memory floor, check result
#   OUTDIR/wsm5.png            ms per call per variant against the memory floor and the 0.5 ms target
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: bench/wsm5.sh BUILD_DIR OUTDIR [--quick]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
quick=${3:-}
wsm5=$build/apps/wsm5/wsm5
[[ -x $wsm5 ]] || { echo "bench/wsm5.sh: $wsm5 not built (cmake --build $build --target wsm5_app)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A CONUS call of the CPU reference takes ~0.05-0.4 s on 16-2 cores; quick mode checks after 1 call.
# GPU timing (both modes): a fresh domain, 3 warm-up calls, then the median of `repeats` calls (calls 4-23
# in quick mode). The domain evolves: the first calls need up to 6 sub-steps, later ones 3, so the per-call
# time falls (0.61 -> 0.41 ms over calls 4-23 on the H200) and flattens; the headline prints the first and
# last timed call next to the median.
if [[ $quick == --quick ]]; then
  steps=10; cpu_steps=1; repeats=20
else
  steps=50; cpu_steps=5; repeats=30
fi
"$wsm5" generate --nx 433 --ny 308 --nz 35 --seed 1 --dt 72 "$tmp/conus.h5"
set +e
"$wsm5" run "$tmp/conus.h5" --variant all --check --steps "$steps" --cpu-steps "$cpu_steps" --repeats "$repeats" \
  --json "$out/wsm5-bench.json" 2>&1 | tee "$out/wsm5-bench.log"
rc=${PIPESTATUS[0]}
set -e

python3 - "$out/wsm5-bench.json" "$out/wsm5.headline.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lines = [f"WSM5 CONUS {r['nx']}x{r['ny']}x{r['nz']}, dt = {r['dt']:g} s, {r['steps']} calls; device: {r.get('device', '?')}"]
cpu = r["cpu"]
lines.append(f"cpu reference: {cpu['ms_per_call_all_threads']:.1f} ms per call on {cpu['threads']} threads, "
             f"{cpu['ms_per_call_one_thread']:.1f} ms on one thread")
if "memory_floor_ms" in r:
    lines.append(f"memory floor {r['memory_floor_ms']:.3f} ms ({r['min_bytes_per_call']/1e6:.0f} MB at the measured "
                 f"{r['d2d_copy_GBps']:.0f} GB/s copy), arithmetic floor {r['arithmetic_floor_ms']:.3f} ms")
if "transfer_floor_ms" in r:
    lines.append(f"host link (pinned cudaMemcpy): {r['h2d_GBps']:.1f} GB/s up, {r['d2h_GBps']:.1f} GB/s down, "
                 f"{r['bidirectional_GBps']:.1f} GB/s both at once; {r['bytes_up_per_call']/1e6:.0f} MB up + "
                 f"{r['bytes_down_per_call']/1e6:.0f} MB down per call -> transfer floor {r['transfer_floor_ms']:.3f} ms "
                 f"(overlapped), {r['transfer_floor_serial_ms']:.3f} ms (serial)")
for v in r.get("variants", []):
    chk = v.get("check", {})
    window = ""
    if "timed_calls" in v:
        window = (f" (median of calls {v['warmup_calls'] + 1}-{v['warmup_calls'] + v['timed_calls']} of an evolving domain; "
                  f"first {v['ms_first_timed_call']:.3f}, last {v['ms_last_timed_call']:.3f})")
    lines.append(f"{v['name']}: {v['ms_per_call']:.3f} ms per call{window}, {v['ms_per_call_with_transfers']:.3f} ms with transfers; "
                 f"{v['speedup_vs_cpu_one_thread']:.0f}x one CPU thread, {v['speedup_vs_cpu_all_threads']:.1f}x all threads; "
                 f"{100*v['fraction_of_memory_floor']:.0f} % of memory floor; check {'ok' if chk.get('ok') else 'FAILED'}; "
                 f"max sub-steps {v['diagnostics']['max_substeps']}")
if r.get("variants"):
    best = min(r["variants"], key=lambda v: v["ms_per_call"])
    lines.append(f"fastest: {best['name']} ({best['ms_per_call']:.3f} ms; target <= 0.5 ms on an H200: "
                 f"{'met' if best['ms_per_call'] <= 0.5 else 'NOT met'})")
lines.append(f"overall check: {'ok' if r.get('ok') else 'FAILED'}")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
if r.get("variants"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [v["name"] for v in r["variants"]]
        x = range(len(names))
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.bar([i - 0.2 for i in x], [v["ms_per_call"] for v in r["variants"]], 0.4, label="without transfers")
        ax.bar([i + 0.2 for i in x], [v["ms_per_call_with_transfers"] for v in r["variants"]], 0.4, label="with transfers (pinned, overlapped)")
        ax.axhline(r["memory_floor_ms"], color="k", ls="--", lw=1, label="memory floor")
        if "transfer_floor_ms" in r:
            ax.axhline(r["transfer_floor_ms"], color="g", ls="-.", lw=1, label="transfer floor (host link)")
        ax.axhline(0.5, color="r", ls=":", lw=1, label="target 0.5 ms")
        ax.set_xticks(list(x)); ax.set_xticklabels(names); ax.set_ylabel("ms per call"); ax.set_yscale("log")
        ax.set_title(f"WSM5 CONUS 433x308x35 — {r.get('device', '')}"[:70], fontsize=8)
        ax.legend(fontsize=7); fig.tight_layout()
        fig.savefig(sys.argv[1].replace("wsm5-bench.json", "wsm5.png"), dpi=120)
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
PY
exit "$rc"
