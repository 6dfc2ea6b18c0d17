#!/usr/bin/env bash
# A signal during a write leaves nothing behind (apps/README.md, "Outputs"): starts
# `spmv generate laplace2d big.h5 --n 2000` (4M rows, 20M entries: HDF5 with deflate takes a second or
# more to write), waits for its temporary big.h5.<pid>.<n>.partial, sends the signal, and checks that the
# process died of that signal and that neither the temporary nor big.h5 exists. KILL cannot be caught:
# the temporary may stay, big.h5 must not exist.
#   signal_cleanup.sh SPMV WORKDIR TERM|INT|HUP|KILL
set -u
spmv=$1 workdir=$2 sig=$3
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
# Background jobs of a non-interactive shell start with SIGINT ignored, and an ignored signal stays
# ignored (the app only handles signals at their default action): restore the default for this one.
env --default-signal="${sig/KILL/TERM}" "$spmv" generate laplace2d big.h5 --n 2000 --precision float --quiet &
pid=$!
for _ in $(seq 1 3000); do  # up to 30 s for the generation to finish and the write to start
  compgen -G "big.h5.*.partial" > /dev/null && break
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.01
done
compgen -G "big.h5.*.partial" > /dev/null || { echo "FAIL: no temporary appeared (finished or failed early)"; wait "$pid"; exit 1; }
kill -s "$sig" "$pid"
wait "$pid"
rc=$?
expected=$((128 + $(kill -l "$sig")))
[ "$rc" = "$expected" ] || { echo "FAIL: exit $rc, expected $expected (killed by SIG$sig)"; exit 1; }
[ "$sig" = KILL ] && rm -f big.h5.*.partial  # the one thing SIGKILL may leave
left=$(ls -A)
[ -z "$left" ] || { echo "FAIL: left behind after SIG$sig: $left"; exit 1; }
echo "ok: SIG$sig during the write, exit $rc, nothing left"
