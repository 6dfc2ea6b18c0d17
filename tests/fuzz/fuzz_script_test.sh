#!/usr/bin/env bash
# scripts/fuzz's handling of findings, on stand-in targets (shell scripts in a scratch BUILD, run with
# --no-build): a death without any report whose unit runs clean alone resumes; one whose unit dies again
# without a report fails, printing both reports; one whose replay shows a libhdf5 fault is libhdf5's defect;
# one whose replay faults in our code fails.
#   fuzz_script_test.sh SCRATCH_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$1
failures=0

# stand_in REPLAY: a fuzz_csr_hdf5 whose first run on the corpus dies with only libFuzzer's unit line, whose
# later corpus runs pass, and whose run on a single unit (the replay) does REPLAY: clean, silent (dies again
# without a report), libhdf5 (an ASan SEGV inside libhdf5) or ours (an ASan SEGV in our reader).
stand_in() {
  rm -rf "$scratch" && mkdir -p "$scratch"
  cat >"$scratch/fuzz_csr_hdf5" <<STANDIN
#!/usr/bin/env bash
prefix=\$(printf '%s\n' "\$@" | sed -n 's/^-artifact_prefix=//p')
if [ -d "\$1" ]; then
  if [ -e "$scratch/died" ]; then echo "stat::number_of_executed_units: 7"; exit 0; fi
  touch "$scratch/died" "\${prefix}crash-0123"
  echo "MS: 1 ChangeByte-; base unit: 0"; echo "artifact_prefix='\$prefix'; Test unit written to \${prefix}crash-0123"
  exit 1
fi
case $1 in
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

# expect REPLAY STATUS TEXT: scripts/fuzz exits STATUS and prints TEXT.
expect() {
  stand_in "$1"
  local out rc
  out=$("$root/scripts/fuzz" --no-build --build "$scratch" --seconds 5 csr_hdf5 2>&1)
  rc=$?
  if [ "$rc" -ne "$2" ] || ! grep -qF -- "$3" <<<"$out"; then
    echo "FAIL replay $1: exit $rc (expected $2), expected to print '$3':"; sed 's/^/  | /' <<<"$out"
    failures=$((failures + 1))
  else
    echo "ok   replay $1: exit $rc, '$3'"
  fi
}
expect clean 0 "died without a report at crash-0123, which alone runs clean; resuming"
expect silent 1 "replayed alone"
expect libhdf5 0 "libhdf5 defect (third party, ERROR: AddressSanitizer: SEGV"
expect ours 1 "sparse::read_hdf5() /src/libsparse/src/hdf5_io.cpp:120:3"
exit $((failures > 0))
