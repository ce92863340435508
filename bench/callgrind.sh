#!/usr/bin/env bash
# make callgrind-budget: host instructions per simulated instruction, as
# valgrind's callgrind counts them (no timing noise), on two bench programs
# with the default checks, against bench/callgrind_budget.txt.  A row more
# than 20 % above its budget fails.  The figure is the marginal cost: the
# host instructions of a run of 2N iterations minus those of N, over the
# simulated instructions the same difference adds (loading and lowering
# cancel out).  CALLGRIND_UPDATE=1 writes the measured figures as the new
# budget (after a change that makes the engine faster, or slower on purpose).
set -euo pipefail
sim=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
budget=$root/bench/callgrind_budget.txt
N=${CALLGRIND_N:-4000}
ROWS=${CALLGRIND_ROWS:-swapstorm smalldma}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() { # row n -> "host_instructions simulated_instructions"
  sed -e "s#N/32#$(($2 / 32))#g" -e "s/\bN\b/$2/g" "$root/bench/$1.yaml" >"$tmp/p.yaml"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$sim" "$tmp/p.yaml" --stats "$tmp/st.json" >/dev/null 2>"$tmp/err" || {
    echo "callgrind: $1 failed:" >&2; cat "$tmp/err" >&2; exit 1; }
  local ir ins
  ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg.out")
  ins=$(sed -n 's/.*"simulator":.*"instructions": \([0-9]*\).*/\1/p' "$tmp/st.json" | head -1)
  echo "$ir $ins"
}

fail=0 lines=""
for row in $ROWS; do
  read -r ir1 in1 <<<"$(measure "$row" "$N")"
  read -r ir2 in2 <<<"$(measure "$row" $((2 * N)))"
  per=$(awk -v a="$ir1" -v b="$ir2" -v c="$in1" -v d="$in2" 'BEGIN { printf "%.0f", (b - a) / (d - c) }')
  lines="$lines$row $per"$'\n'
  want=$(awk -v r="$row" '$1 == r { print $2 }' "$budget" 2>/dev/null || true)
  if [ -z "$want" ]; then
    echo "callgrind: $row: $per host instructions per simulated instruction (no budget)"
  elif awk -v p="$per" -v w="$want" 'BEGIN { exit !(p > 1.2 * w) }'; then
    echo "callgrind: $row: $per host instructions per simulated instruction, more than 1.2 x the budget $want: FAILED"
    fail=1
  else
    echo "callgrind: $row: $per host instructions per simulated instruction (budget $want, limit $(awk -v w="$want" 'BEGIN { printf "%.0f", 1.2 * w }'))"
  fi
done
if [ "${CALLGRIND_UPDATE:-0}" = 1 ]; then
  { echo "# row  host instructions per simulated instruction (bench/callgrind.sh; default checks, N=$N)"; printf '%s' "$lines"; } >"$budget"
  echo "callgrind: budget written to bench/callgrind_budget.txt"
fi
exit $fail
