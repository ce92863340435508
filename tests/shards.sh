#!/usr/bin/env bash
# tests/shards.sh SC_SIM -- sc-sim sweep, --shard K/N and sc-sim merge (docs/cluster.md).
#
#   1. sweep points of the documented gather kernel (examples/dma_gather.yaml)
#      against hand calculation: two DMAs of 256 bytes (the gather and the
#      copy out), each taking 256 / dma_bytes_per_cycle cycles on the
#      engine, so a point has 247 + 2 x (256/B - 256/64) cycles, B the
#      bytes per cycle (247: the default B = 64, docs/timing.md);
#   2. each point equals a plain `sc-sim run --stats` of the program with
#      that parameter in its chip mapping (a consistency check);
#   3. bad --set values and names are input errors (exit 2, did you mean);
#   4. 4 shards merged == the unsharded run, for a sweep (the table, and
#      the JSON lines less host_seconds) and for a fuzz campaign (the
#      failures and the summary line with its counts per rule id).
set -u
sim=${1:?usage: tests/shards.sh path/to/sc-sim}
here=$(cd "$(dirname "$0")/.." && pwd)
gather=$here/examples/dma_gather.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "testing $1 ... passed"; pass=$((pass + 1)); }
ko() { echo "testing $1 ... FAILED ($2)"; fail=$((fail + 1)); }
field() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p"; }

# 1 and 2: bytes per cycle -> cycles by hand
while read -r b want; do
  got=$("$sim" sweep "$gather" --set dma_bytes_per_cycle=$b 2>/dev/null | field cycles)
  [ "$got" = "$want" ] && ok "sweep dma_bytes_per_cycle=$b: $want cycles" || ko "sweep dma_bytes_per_cycle=$b" "got '$got', want $want"
  sed "s/^chip: tpu7x$/chip: {preset: tpu7x, dma_bytes_per_cycle: $b}/" "$gather" > "$tmp/g$b.yaml"
  "$sim" run "$tmp/g$b.yaml" --stats "$tmp/g$b.json" >/dev/null 2>&1
  run=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["cycles"])' "$tmp/g$b.json" 2>/dev/null)
  [ "$run" = "$got" ] && ok "sweep point == run --stats ($b B/cycle)" || ko "sweep point == run --stats ($b B/cycle)" "run $run, sweep $got"
done <<'TABLE'
8 303
16 271
32 255
64 247
TABLE

# 3: bad input
while IFS='|' read -r arg msg; do
  out=$("$sim" sweep "$gather" $arg 2>&1 >/dev/null); rc=$?
  [ $rc = 2 ] && [[ "$out" == *"$msg"* ]] && ok "sweep $arg: exit 2" || ko "sweep $arg" "exit $rc: $out"
done <<'TABLE'
--set dma_bytes_per_cyc=1|unknown parameter 'dma_bytes_per_cyc'; did you mean 'dma_bytes_per_cycle'?
--set num_lanes=8,x|--set num_lanes: 'x' is not a positive integer
--set num_lanes=0|--set num_lanes: '0' is not a positive integer
--set preset=tpu_v4|--set preset: 'tpu_v4' is not a chip with SparseCores
--set num_lanes|--set takes PARAM=V1,V2,...
--set num_lanes=8 --shard 4/4|--shard takes K/N with 0 <= K < N
TABLE
out=$("$sim" fuzz --count 4 --shard 1/0 2>&1); rc=$?
[ $rc = 2 ] && [[ "$out" == *"--shard takes K/N"* ]] && ok "fuzz --shard 1/0: exit 2" || ko "fuzz --shard 1/0" "exit $rc"

out=$("$sim" fuzz --count 4 --shard 0/2 --mutate all 2>&1); rc=$?
[ $rc = 2 ] && [[ "$out" == *"does not go with --mutate"* ]] && ok "fuzz --shard with --mutate: exit 2" || ko "fuzz --shard --mutate" "exit $rc"

# 4: shards merged == unsharded
grid=(--set dma_bytes_per_cycle=8,32,128 --set hbm_bytes_per_second=1e11,1e12 --set subcores=1,2)
"$sim" sweep "$gather" "${grid[@]}" --out "$tmp/all.jsonl" > "$tmp/all.txt"
mkdir -p "$tmp/sw"
for k in 0 1 2 3; do "$sim" sweep "$gather" "${grid[@]}" --shard $k/4 --out "$tmp/sw/shard-$k.jsonl" >/dev/null; done
"$sim" merge --out "$tmp/merged.jsonl" "$tmp/sw" > "$tmp/merged.txt"
strip() { sed 's/, "host_seconds": [0-9.]*//' "$1"; }
if cmp -s "$tmp/all.txt" "$tmp/merged.txt" && [ "$(strip "$tmp/all.jsonl")" = "$(strip "$tmp/merged.jsonl")" ] && [ "$(wc -l < "$tmp/all.jsonl")" = 12 ]; then
  ok "sweep: 4 shards merged == unsharded (12 points)"
else ko "sweep: 4 shards merged == unsharded" "$(diff "$tmp/all.txt" "$tmp/merged.txt" | head -5)"; fi
rm "$tmp/sw/shard-2.jsonl"
out=$("$sim" merge "$tmp/sw" 2>&1 >/dev/null); rc=$?
[ $rc = 3 ] && [[ "$out" == *"point 2 is in none of the shards"* ]] && ok "merge: a missing shard is exit 3" || ko "merge: a missing shard" "exit $rc: $out"

fz=(--seed 11 --count 60 --out "$tmp/repro")
"$sim" fuzz "${fz[@]}" --jsonl "$tmp/fuzz-all.jsonl" | grep -v ' s, ' > "$tmp/fuzz-all.txt"
mkdir -p "$tmp/fz"
for k in 0 1 2 3; do "$sim" fuzz "${fz[@]}" --shard $k/4 --jsonl "$tmp/fz/shard-$k.jsonl" >/dev/null; done
"$sim" merge "$tmp/fz" > "$tmp/fuzz-merged.txt"
if cmp -s "$tmp/fuzz-all.txt" "$tmp/fuzz-merged.txt" && grep -q '^fuzz: 60 programs' "$tmp/fuzz-merged.txt"; then
  ok "fuzz: 4 shards merged == unsharded (60 programs)"
else ko "fuzz: 4 shards merged == unsharded" "$(diff "$tmp/fuzz-all.txt" "$tmp/fuzz-merged.txt" | head -5)"; fi

echo "shards: $pass passed, $fail failed"
[ $fail = 0 ]
