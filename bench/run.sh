#!/usr/bin/env bash
# make bench: each bench program through sc-sim (engine + reference +
# verification) with --stats, against bench/baseline doing the same memory
# work as a plain C loop, in the same run.  Figures are ratios.
set -euo pipefail
sim=$1 base=$2
printf '%-14s %12s %14s %12s %14s %10s\n' program sim_cycles engine_instr/s engine_s baseline_s ratio
for name in vector_loop dma_stream; do
  stats=$(mktemp)
  "$sim" "bench/$name.yaml" --stats "$stats" >/dev/null
  cycles=$(sed -n 's/^  "cycles": \([0-9]*\),/\1/p' "$stats")
  host=$(sed -n 's/.*"host_seconds": \([0-9.]*\),.*/\1/p' "$stats")
  ips=$(sed -n 's/.*"instructions_per_second": \([0-9.]*\),.*/\1/p' "$stats")
  b=$("$base" "$name")
  ratio=$(awk -v h="$host" -v b="$b" 'BEGIN { printf "%.0f", (b > 0 ? h / b : 0) }')
  printf '%-14s %12s %14.0f %12s %14s %9sx\n' "$name" "$cycles" "$ips" "$host" "$b" "$ratio"
  rm -f "$stats"
done
