#!/usr/bin/env bash
# One case of the bad-input corpus (tests/apps/bad_inputs.cmake reads every MANIFEST.tsv under
# tests/data/bad): runs COMMAND with bash in a fresh WORKDIR and checks the contract of apps/README.md.
#   run_bad_input.sh WORKDIR EXPECTED_EXIT FRAGMENT COMMAND
# Exit code EXPECTED_EXIT. Non-zero: stderr is exactly one line, holding FRAGMENT, at most 400 characters
# (no echoed 10 MB token), and the command leaves nothing in WORKDIR but the inputs it made itself
# (files named in_*): no output, no *.partial. Zero: FRAGMENT appears in stdout or stderr.
# In COMMAND: $SPMV $WSM5 $REDUCE $SOLVE (the apps), $BAD (the manifest's folder), $GEN (the generated
# HDF5 files), $DATA (data/); `keep SRC in_NAME` copies an input into WORKDIR and the case then fails
# unless that copy is byte-identical after the command (an input overwritten by an output).
set -u
workdir=$1 expect=$2 fragment=$3 cmd=$4
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
: > .kept
keep() { cp "$1" "$2" && md5sum "$2" >> .kept; }
export -f keep
bash -c "$cmd" > .stdout 2> .stderr
rc=$?
fail() { echo "FAIL: $*"; echo "--- command: $cmd"; echo "--- stdout"; head -c 2000 .stdout; echo "--- stderr"; head -c 2000 .stderr; exit 1; }
[ "$rc" = "$expect" ] || fail "exit $rc, expected $expect"
if [ -s .kept ] && ! md5sum --quiet -c .kept > /dev/null 2>&1; then fail "an input was modified"; fi
if [ "$expect" = 0 ]; then
  grep -qF -- "$fragment" .stdout .stderr || fail "'$fragment' in neither stdout nor stderr"
  exit 0
fi
lines=$(wc -l < .stderr)
[ "$lines" = 1 ] || fail "$lines lines on stderr, expected 1"
grep -qF -- "$fragment" .stderr || fail "stderr lacks '$fragment'"
width=$(wc -c < .stderr)
[ "$width" -le 400 ] || fail "the error line is $width characters long"
left=$(find . -mindepth 1 -maxdepth 1 ! -name '.*' ! -name 'in_*' -printf '%f ')
[ -z "$left" ] || fail "left behind after a failure: $left"
echo "ok: exit $rc: $(cat .stderr)"
