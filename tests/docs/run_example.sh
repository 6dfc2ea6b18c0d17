#!/bin/sh
# run_example.sh PROGRAM: runs a README example; exit 77 (CTest: skipped) when it stopped because no CUDA
# device is usable, otherwise the program's own exit code.
out=$("$1" 2>&1)
rc=$?
printf '%s\n' "$out"
case "$out" in
  *"no CUDA device"*|*cudaErrorInsufficientDriver*|*cudaErrorNoDevice*) echo "skipped: no CUDA device"; exit 77 ;;
esac
exit $rc
