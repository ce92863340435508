#!/usr/bin/env bash
# make bench: the bench programs through sc-sim, one after another, with
# --stats; swap_stream and copy_stream also against bench/baseline (the same
# memory work as plain C loops, in the same run).  Each program runs with
# verification and race detection off (--no-verify --no-races) and, where it
# fits in time, with them on.  Figures are printed and written to
# bench/results.md.
set -euo pipefail
sim=$1 base=$2
out=bench/results.md
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | head -1; }

run() { # program flags -> "wall instr/s bytes/s predicted_us"
  local stats
  stats=$(mktemp)
  local t0 t1
  t0=$(date +%s.%N)
  "$sim" "bench/$1.yaml" $2 --stats "$stats" >/dev/null
  t1=$(date +%s.%N)
  printf '%.3f %s %s %s' "$(echo "$t1 - $t0" | bc)" "$(field instructions_per_second "$stats")" \
    "$(field dma_bytes_per_second "$stats")" "$(field time_us "$stats")"
  rm -f "$stats"
}

{
  echo "# sc-sim benchmarks"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo
  echo "| program | flags | wall s | sim instr/s | sim DMA bytes/s | predicted kernel us | vs C loop |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for p in swap_stream copy_stream add_one gather_sixteenth gather_full; do
    for flags in "--no-verify --no-races" ""; do
      [ "$p" = gather_full ] && [ -z "$flags" ] && continue   # 2 GiB through the reference: not in minutes
      read -r wall ips bps us <<<"$(run "$p" "$flags")"
      ratio="-"
      if [ "$p" = swap_stream ] || [ "$p" = copy_stream ]; then
        b=$("$base" "$p")
        ratio=$(awk -v w="$wall" -v b="$b" 'BEGIN { printf "%.0fx slower (C %.4f s)", w / b, b }')
      fi
      echo "| $p | ${flags:-(verification and races on)} | $wall | $ips | $bps | $us | $ratio |"
    done
  done
} | tee "$out"
