#!/usr/bin/env bash
# Every program of the golden suite and examples/ that runs clean is traced
# (JSON and CSV); each trace must pass the strict checker (valid JSON,
# required fields, metadata, async pairs matched, time monotonic per track)
# and two runs of the same program must give byte-identical traces.
# Usage: tests/traces.sh path/to/sc-sim path/to/trace-check
set -u
sim=$(realpath "$1") check=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
while IFS= read -r exp; do
  head -n 1 "$exp" | grep -qx 'exit: 0' || continue
  dir=$(dirname "$exp") name=$(basename "$exp" .expected)
  [ -f "$dir/$name.args" ] && continue
  ( cd "$dir" && "$sim" "$name.yaml" --trace "$tmp/a.json" >/dev/null 2>&1 && "$sim" "$name.yaml" --trace "$tmp/b.json" >/dev/null 2>&1 &&
    "$sim" "$name.yaml" --trace "$tmp/c.csv" --trace-format csv >/dev/null 2>&1 )
  if "$check" "$tmp/a.json" >/dev/null 2>"$tmp/err" && "$check" "$tmp/c.csv" >/dev/null 2>>"$tmp/err" && cmp -s "$tmp/a.json" "$tmp/b.json"; then
    pass=$((pass+1))
  else
    fail=$((fail+1))
    echo "testing trace of ${exp#"$root"/} ... FAILED"
    head -3 "$tmp/err"
  fi
  rm -f "$tmp"/a.json "$tmp"/b.json "$tmp"/c.csv
done < <(find "$root/tests/golden" "$root/examples" -name '*.expected' | sort)
# A FIFO (or a device such as /dev/null) given to --trace or --stats is
# written in place: renaming a temporary onto it would replace the node.
for opt in --trace --stats; do
  mkfifo "$tmp/pipe"
  cat "$tmp/pipe" > "$tmp/pipe.out" &
  reader=$!
  "$sim" "$root/examples/quickstart.yaml" "$opt" "$tmp/pipe" >/dev/null 2>"$tmp/err"; st=$?
  wait $reader
  if [ $st = 0 ] && [ -p "$tmp/pipe" ] && [ -s "$tmp/pipe.out" ]; then
    pass=$((pass+1))
  else
    fail=$((fail+1))
    echo "testing $opt to a FIFO ... FAILED (exit $st; still a FIFO: $([ -p "$tmp/pipe" ] && echo yes || echo no))"
    head -3 "$tmp/err"
  fi
  rm -f "$tmp/pipe" "$tmp/pipe.out"
done
echo "traces: $pass passed, $fail failed"
[ $fail = 0 ]
