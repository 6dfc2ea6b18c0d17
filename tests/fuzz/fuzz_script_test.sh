#!/usr/bin/env bash
# scripts/fuzz's handling of findings, on stand-in targets (shell scripts in a scratch BUILD, run with
# --no-build): a death without any report whose unit runs clean alone resumes; one whose unit dies again
# without a report fails, printing both reports; one whose replay shows a libhdf5 fault is libhdf5's defect;
# one whose replay faults in our code fails; an RSS out-of-memory that the unit alone does not reproduce
# resumes, and one that it reproduces without a profile placing it is decided by the profiled replay.
#   fuzz_script_test.sh SCRATCH_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$1
failures=0

# stand_in REPLAY [FIRST]: a fuzz_csr_hdf5 whose first run on the corpus dies (FIRST silent, the default:
# with only libFuzzer's unit line; rss: an RSS out-of-memory whose profile holds only libFuzzer's 20 MB, the
# memory freed before libFuzzer looked), whose later corpus runs pass, and whose run on a single unit (the
# replay) does REPLAY: clean, silent (dies again without a report), libhdf5 (an ASan SEGV inside libhdf5),
# ours (an ASan SEGV in our reader), or rss_libhdf5 / rss_ours: the same RSS report again, and under ASan's
# heap_profile=1 with no malloc limit (the profiled replay) samples holding 1.3 GB in libhdf5 / in our
# reader first (with a malloc limit the profiled run would deadlock: the stand-in dies without a report).
stand_in() {
  rm -rf "$scratch" && mkdir -p "$scratch"
  cat >"$scratch/fuzz_csr_hdf5" <<STANDIN
#!/usr/bin/env bash
prefix=\$(printf '%s\n' "\$@" | sed -n 's/^-artifact_prefix=//p')
rss_report() {
  printf '%s\n' "==9== ERROR: libFuzzer: out-of-memory (used: 2313Mb; limit: 2048Mb)" \
    "Live Heap Allocations: 25091251 bytes in 3008 chunks; showing top 95% (at most 8 unique contexts)" \
    "20971840 byte(s) (83%) in 1 allocation(s)" "    #0 0x1 in main (/b/fuzz_csr_hdf5+0x763f2)" ""
}
heap_sample() {  # heap_sample FRAME: ASan's heap_profile=1 sample, 1.3 GB live, 98 % allocated at FRAME
  printf '%s\n' "HEAP PROFILE at RSS 2132Mb" \
    "Live Heap Allocations: 1324237996 bytes in 40601225 chunks; showing top 90% (at most 20 unique contexts)" \
    "1299881420 byte(s) (98%) in 40599992 allocation(s)" "    #0 0x1 in malloc (/b/fuzz_csr_hdf5+0xf917e)" \
    "    #1 0x2 in \$1" ""
}
if [ -d "\$1" ]; then
  if [ -e "$scratch/died" ]; then echo "stat::number_of_executed_units: 7"; exit 0; fi
  touch "$scratch/died" "\${prefix}crash-0123"
  [ "${2:-silent}" != rss ] || rss_report
  echo "MS: 1 ChangeByte-; base unit: 0"; echo "artifact_prefix='\$prefix'; Test unit written to \${prefix}crash-0123"
  exit 1
fi
profiled=0
case "\${ASAN_OPTIONS:-}" in *heap_profile=1*) profiled=1 ;; esac
if [ \$profiled = 1 ] && ! printf '%s\n' "\$@" | grep -qx -- -malloc_limit_mb=1048576; then exit 1; fi
case $1 in
  rss_libhdf5) [ \$profiled = 0 ] || heap_sample "H5FL_reg_malloc (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x1)"
               rss_report; exit 1 ;;
  rss_ours) [ \$profiled = 0 ] || heap_sample "sparse::read_hdf5() /src/libsparse/src/hdf5_io.cpp:120:3"
            rss_report; exit 1 ;;
  clean) exit 0 ;;
  silent) echo "==9==AddressSanitizer: CHECK failed: asan_allocator.cpp:190"; exit 1 ;;
  libhdf5) printf '%s\n' "==9==ERROR: AddressSanitizer: SEGV on unknown address 0x10" \
             "    #0 0x7f0000000001 in H5HG_read (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x1)"; exit 1 ;;
  ours) printf '%s\n' "==9==ERROR: AddressSanitizer: SEGV on unknown address 0x10" \
          "    #0 0x7f0000000001 in sparse::read_hdf5() /src/libsparse/src/hdf5_io.cpp:120:3"; exit 1 ;;
esac
STANDIN
  chmod +x "$scratch/fuzz_csr_hdf5"
}

# expect REPLAY STATUS TEXT [FIRST]: scripts/fuzz exits STATUS and prints TEXT.
expect() {
  stand_in "$1" "${4:-silent}"
  local out rc
  out=$("$root/scripts/fuzz" --no-build --build "$scratch" --seconds 5 csr_hdf5 2>&1)
  rc=$?
  if [ "$rc" -ne "$2" ] || ! grep -qF -- "$3" <<<"$out"; then
    echo "FAIL replay $1 (first run ${4:-silent}): exit $rc (expected $2), expected to print '$3':"; sed 's/^/  | /' <<<"$out"
    failures=$((failures + 1))
  else
    echo "ok   replay $1 (first run ${4:-silent}): exit $rc, '$3'"
  fi
}
expect clean 0 "died without a report at crash-0123, which alone runs clean; resuming"
expect silent 1 "replayed alone"
expect libhdf5 0 "libhdf5 defect (third party, ERROR: AddressSanitizer: SEGV"
expect ours 1 "sparse::read_hdf5() /src/libsparse/src/hdf5_io.cpp:120:3"
expect clean 0 "RSS past 2048 MB at crash-0123, which alone stays below" rss
expect rss_libhdf5 0 "libhdf5 defect (third party, ERROR: libFuzzer: out-of-memory" rss
expect rss_ours 1 "largest heap profile: 1262 MB live, 98% in its first context:" rss
expect rss_ours 1 "#1 0x2 in sparse::read_hdf5() /src/libsparse/src/hdf5_io.cpp:120:3" rss
exit $((failures > 0))
