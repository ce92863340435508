#!/usr/bin/env bash
# Golden CLI tests: every tests/golden/**/NAME.yaml and examples/NAME.yaml
# that has a NAME.expected beside it is run from its own folder as
#   sc-sim [ARGS] NAME.yaml
# (ARGS from NAME.args when present).  NAME.expected holds "exit: N" on its
# first line and the expected standard error after it, line for line.  When
# the expected text has no "note:" line, the note lines sc-sim prints are
# left out of the comparison (notes are for people and may change); when it
# has one, the whole standard error is compared.  NAME.stdout, when
# present, must equal standard output exactly.  GOLDEN_TIMEOUT (seconds,
# default 60) bounds each program (make valgrind raises it).
set -u
sim=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS= read -r exp; do
  dir=$(dirname "$exp")
  name=$(basename "$exp" .expected)
  yaml="$name.yaml"
  [ -f "$dir/$yaml" ] || { echo "testing $exp ... FAILED (no $yaml)"; fail=$((fail+1)); continue; }
  args=()
  [ -f "$dir/$name.args" ] && read -r -a args < "$dir/$name.args"
  want_exit=$(head -n 1 "$exp" | sed -n 's/^exit: //p')
  tail -n +2 "$exp" > "$tmp/want"
  ( cd "$dir" && timeout "${GOLDEN_TIMEOUT:-60}" "$sim" "${args[@]}" "$yaml" >"$tmp/out" 2>"$tmp/err" ); got_exit=$?
  if grep -q ': note: ' "$tmp/want"; then cp "$tmp/err" "$tmp/got"; else grep -v ': note: ' "$tmp/err" > "$tmp/got"; fi
  ok=1
  [ "$got_exit" = "$want_exit" ] || ok=0
  cmp -s "$tmp/want" "$tmp/got" || ok=0
  if [ -f "$dir/$name.stdout" ] && ! cmp -s "$dir/$name.stdout" "$tmp/out"; then ok=0; fi
  rel=${exp#"$root"/}
  if [ $ok = 1 ]; then
    pass=$((pass+1))
  else
    fail=$((fail+1))
    echo "testing ${rel%.expected} ... FAILED (exit $got_exit, want $want_exit)"
    diff -u "$tmp/want" "$tmp/got" | head -20
    [ -f "$dir/$name.stdout" ] && diff -u "$dir/$name.stdout" "$tmp/out" | head -20
  fi
done < <(find "$root/tests/golden" "$root/examples" -name '*.expected' | sort)
echo "golden: $pass passed, $fail failed"
[ $fail = 0 ]
