#!/usr/bin/env bash
# Faults of the output folder (apps/README.md, "Outputs"), on small tmpfs mounts made in a private mount
# namespace (`unshare -rm`: no root needed where user namespaces are allowed; the case is skipped, exit
# 77, where they are not):
#  - a disk that fills during spmv's HDF5 write and during wsm5's: one line on stderr, exit 2 or 3, no
#    crash at exit (HDF5's exit-time cleanup), nothing left on the disk;
#  - a disk that fills during a Matrix Market write (stdio): the same;
#  - a read-only folder: one line naming the folder, exit 2, before any work.
#   full_disk.sh SPMV WSM5 WORKDIR
set -u
spmv=$1 wsm5=$2 workdir=$3
rm -rf "$workdir" && mkdir -p "$workdir/full" "$workdir/ro" && cd "$workdir" || exit 1
unshare -rm true 2> /dev/null || { echo "skipped: no private mount namespace here (unshare -rm)"; exit 77; }
# One case: COMMAND run inside the namespace with a 1 MiB tmpfs on full/ (ro/: read-only).
run_case() {
  local name=$1 expect=$2 fragment=$3 cmd=$4
  unshare -rm bash -c "mount -t tmpfs -o size=1m tmpfs full && mount -t tmpfs -o ro,size=1m tmpfs ro && \
    { $cmd > out.txt 2> err.txt; echo \$? > rc.txt; ls -A full ro > left.txt; }" || { echo "FAIL $name: mount"; return 1; }
  local rc lines left
  rc=$(cat rc.txt) lines=$(wc -l < err.txt) left=$(tr -d '\n' < left.txt | sed 's/full://;s/ro://')
  if ! [[ " $expect " == *" $rc "* ]] || [ "$lines" != 1 ] || ! grep -q -- "$fragment" err.txt || [ -n "$left" ]; then
    echo "FAIL $name: exit $rc (expected one of: $expect), $lines stderr line(s), left: '$left'"
    cat err.txt
    return 1
  fi
  echo "ok $name: exit $rc: $(cat err.txt)"
}
status=0
run_case spmv_hdf5_full "2 3" "full/big.h5" "'$spmv' generate random full/big.h5 --rows 200000 --k 8 --quiet" || status=1
run_case spmv_mtx_full "2 3" "full/big.mtx" "'$spmv' generate laplace2d full/big.mtx --n 300 --quiet" || status=1
run_case wsm5_hdf5_full "2 3" "full/big.h5" "'$wsm5' generate full/big.h5 --nx 100 --ny 100 --nz 35 --quiet" || status=1
run_case spmv_read_only "2" "cannot create files in folder 'ro'" "'$spmv' generate laplace2d ro/out.h5 --n 8" || status=1
exit $status
