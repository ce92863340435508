#!/usr/bin/env bash
# Mutation check of the execution goldens.
#
#   tests/mutants.sh path/to/sc-sim
#
# Every program tests/golden/exec/NAME.yaml whose NAME.expected says
# "exit: 0" checks its own results (expect items, expect.refs).  Each must
# pass with the correct lowering.  Then, for every deliberately wrong
# lowering listed by `sc-sim --list-mutants`, every such program is run with
# `--mutate NAME`; a program that then exits 3 (a verification failed: the
# lowering differs from the reference, or an `expect` failed) detects the
# mutant.  Any other outcome (a rejection, a fault both runs share, a crash,
# a hang) is not a detection: it would mean the wrong lowering slipped past
# verification and was stopped by something else.  A program that already
# fails with the correct lowering cannot tell anything about a mutant and
# never counts as detecting one (it still counts in M, and it fails the
# script).  One line per mutant:
#   mutant NAME: detected by N of M programs (first: FILE)[; other exits: FILE=RC ...]
# and a summary line "mutants: N passed, M failed".  Exit status 1 when a
# mutant is detected by no program or when the correct lowering fails on
# any program, else 0.
set -u
if [ $# -ne 1 ]; then
  echo "usage: $0 path/to/sc-sim" >&2
  exit 2
fi
sim=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/tests/golden/exec"
limit=60   # seconds per run; a run that hangs counts as a different outcome

programs=()
for exp in "$dir"/*.expected; do
  [ -f "$exp" ] || continue
  [ "$(head -n 1 "$exp")" = "exit: 0" ] || continue
  yaml="${exp%.expected}.yaml"
  [ -f "$yaml" ] && programs+=("$(basename "$yaml")")
done
total=${#programs[@]}
if [ "$total" -eq 0 ]; then
  echo "mutants: no exit-0 programs in $dir" >&2
  exit 1
fi

run() { # run MUTANT-ARGS... PROGRAM -> exit status of sc-sim
  ( cd "$dir" && timeout "$limit" "$sim" "$@" >/dev/null 2>&1 )
}

status=0
baseline_failed=0
good=()   # the programs that pass with the correct lowering
for p in "${programs[@]}"; do
  run "$p"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "baseline: $p exits $rc without --mutate (want 0)"
    baseline_failed=$((baseline_failed + 1))
  else
    good+=("$p")
  fi
done
if [ "$baseline_failed" -ne 0 ]; then
  echo "baseline: the correct lowering fails on $baseline_failed of $total programs"
  status=1
fi

mapfile -t mutants < <("$sim" --list-mutants | awk 'NF { print $1 }')
if [ "${#mutants[@]}" -eq 0 ]; then
  echo "mutants: sc-sim --list-mutants printed no mutants" >&2
  exit 1
fi

passed=0 failed=0
for m in "${mutants[@]}"; do
  n=0 first=none other=""
  for p in ${good[@]+"${good[@]}"}; do
    run --mutate "$m" "$p"
    rc=$?
    if [ "$rc" -eq 3 ]; then
      n=$((n + 1))
      [ "$first" = none ] && first=$p
    elif [ "$rc" -ne 0 ]; then
      other="$other $p=$rc"
    fi
  done
  echo "mutant $m: detected by $n of $total programs (first: $first)${other:+; other exits:$other}"
  if [ "$n" -gt 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    status=1
  fi
done
echo "mutants: $passed passed, $failed failed"
exit $status
