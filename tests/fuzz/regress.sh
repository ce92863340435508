#!/bin/sh
# tests/fuzz/regress.sh FUZZ_DIR -- replays inputs through both harnesses once,
# without mutation: the seed corpus (goldens, examples, tests/fuzz/hostile),
# tests/golden/robust and every file under FUZZ_DIR/crashes.  The harnesses
# run under ASan and UBSan with the campaign's limits (10 s, 2048 MB), so an
# input that still crashes, leaks, hangs or allocates too much is listed.
# Exit status 1 when any input fails: known open bugs keep it failing until
# they are fixed (docs/robustness.md lists them).
set -u
dir=${1:?usage: regress.sh FUZZ_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
list=$(mktemp)
trap 'rm -f "$list" "$list.log"' EXIT
find "$dir/seeds" "$root/tests/golden/robust" "$dir/crashes" -type f ! -name '*.expected' ! -name '*.args' \
  2>/dev/null | sort > "$list"
n=$(wc -l < "$list")
bad=0
for h in "$dir/fuzz_input" "$dir/fuzz_program"; do
  # all at once first (fast); one at a time only to name the failures
  if xargs "$h" -timeout=10 -rss_limit_mb=2048 -runs=1 < "$list" > "$list.log" 2>&1; then
    echo "fuzz-regress: ${h##*/}: $n inputs, no failure"
    continue
  fi
  while IFS= read -r f; do
    if ! "$h" -timeout=10 -rss_limit_mb=2048 -runs=1 "$f" > "$list.log" 2>&1; then
      what=$(grep -m1 -oE 'ERROR: [A-Za-z]+: [a-z-]+.*|runtime error: .*|fuzz_program: (sc-sim cannot|the lowering printed).*' "$list.log" | cut -c1-100)
      echo "fuzz-regress: ${h##*/}: FAILED ${f#"$root"/}: ${what:-exit $?}"
      bad=$((bad + 1))
    fi
  done < "$list"
done
[ "$bad" = 0 ] || { echo "fuzz-regress: $bad failure(s)"; exit 1; }
