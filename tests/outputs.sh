#!/usr/bin/env bash
# tests/outputs.sh SC_SIM -- the output files hold what happened, not just a
# valid structure (tests/traces.sh checks the structure):
#
#   1. trace goldens: each tests/outputs/NAME.yaml with a NAME.trace is
#      traced (JSON and CSV) and compared with the offsets, sizes, spans,
#      lines and cycles worked out by hand in NAME.trace (check.py);
#   2. stats goldens: NAME.stats lists --stats values worked out by hand,
#      and every stats file adds up (check.py: each subcore's categories
#      sum to the cycles, the profile's lines to the subcores' cycles);
#   3. names that need escaping (a file named we"ird.yaml, a `name:` with
#      quotes, backslashes and control characters, a file name that is not
#      UTF-8) give valid JSON in --stats, --trace and --json;
#   4. --stats and --trace files get the same mode, 0666 less the umask
#      (0644 under umask 022, 0600 under 077).
set -u
sim=$(realpath "${1:?usage: tests/outputs.sh path/to/sc-sim}")
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/tests/outputs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

result() { # NAME OK [DETAILS FILE]
  if [ "$2" = 0 ]; then
    pass=$((pass+1))
  else
    fail=$((fail+1))
    echo "testing outputs/$1 ... FAILED"
    [ -n "${3:-}" ] && head -40 "$3"
  fi
}

for want in "$dir"/*.trace; do
  name=$(basename "$want" .trace)
  # NAME.args, when present, holds the program and options to trace (a window)
  args="$name.yaml"; [ -f "$dir/$name.args" ] && args=$(cat "$dir/$name.args")
  rm -f "$tmp/t.json" "$tmp/t.csv" # a run that faults or deadlocks writes its trace too (exit 4)
  ( cd "$dir" && "$sim" $args --trace "$tmp/t.json"; "$sim" $args --trace "$tmp/t.csv" --trace-format csv ) >/dev/null 2>"$tmp/out"
  python3 "$dir/check.py" trace "$tmp/t.json" "$tmp/t.csv" "$want" >>"$tmp/out" 2>&1
  result "$name.trace" $? "$tmp/out"
done

for want in "$dir"/*.stats; do
  name=$(basename "$want" .stats)
  rm -f "$tmp/s.json" # a run that faults writes its stats too (deadlock.yaml)
  ( cd "$dir" && "$sim" "$name.yaml" --stats "$tmp/s.json" ) >/dev/null 2>"$tmp/out"
  python3 "$dir/check.py" stats "$tmp/s.json" "$want" >>"$tmp/out" 2>&1
  result "$name.stats" $? "$tmp/out"
done

# profile goldens: NAME.profile holds the --profile table (after its
# '#' comment lines), from its "profile:" line to the end of the output
for want in "$dir"/*.profile; do
  name=$(basename "$want" .profile)
  ( cd "$dir" && "$sim" "$name.yaml" --profile ) 2>"$tmp/out" | sed -n '/^profile: /,$p' > "$tmp/p.txt"
  grep -v '^#' "$want" | diff -u - "$tmp/p.txt" >>"$tmp/out"
  result "$name.profile" $? "$tmp/out"
done

# name_ok KIND FILE NAME: FILE is JSON (python3 -m json.tool) that carries
# NAME, a JSON string, intact (check.py name).
name_ok() {
  python3 -m json.tool "$2" >/dev/null 2>"$tmp/out" && python3 "$dir/check.py" name "$@" >>"$tmp/out" 2>&1
}

cp "$dir/offsets.yaml" "$tmp/we\"ird.yaml"
( cd "$tmp" && "$sim" 'we"ird.yaml' --stats s.json --trace t.json >/dev/null 2>&1 )
name_ok stats "$tmp/s.json" '"we\"ird.yaml"'; result 'stats of we"ird.yaml' $? "$tmp/out"
name_ok trace "$tmp/t.json" '"we\"ird.yaml"'; result 'trace of we"ird.yaml' $? "$tmp/out"

# name: a quote, a backslash, a tab, U+0001 and a non-ASCII letter
sed 's/^version: 1$/version: 1\nname: "q\\"b\\\\s\\tt\\x01\\u00e9"/' "$dir/offsets.yaml" > "$tmp/named.yaml"
( cd "$tmp" && "$sim" named.yaml --stats s.json --trace t.json >/dev/null 2>&1 )
name='"q\"b\\s\tt\u0001\u00e9"'
name_ok stats "$tmp/s.json" "$name"; result 'stats of a name with quotes and control characters' $? "$tmp/out"
name_ok trace "$tmp/t.json" "$name"; result 'trace of a name with quotes and control characters' $? "$tmp/out"

# --json of a program whose file name is not UTF-8 (it is the error's "file"):
# the byte that is not UTF-8 becomes U+FFFD
bad="bad$(printf '\377').yaml"
printf 'version: 1\nbdy: []\n' > "$tmp/$bad"
( cd "$tmp" && "$sim" "$bad" --json > j.json 2>/dev/null )
name_ok json "$tmp/j.json" '"bad\ufffd.yaml"'; result '--json of a file name that is not UTF-8' $? "$tmp/out"

for mask in 022 077; do
  rm -f "$tmp/s.json" "$tmp/t.json"
  ( umask $mask && cd "$dir" && "$sim" offsets.yaml --stats "$tmp/s.json" --trace "$tmp/t.json" >/dev/null 2>&1 )
  want=$(printf '%o' $((0666 & ~0$mask)))
  got="$(stat -c %a "$tmp/s.json" 2>/dev/null) $(stat -c %a "$tmp/t.json" 2>/dev/null)"
  echo "under umask $mask: stats and trace files have modes $got, want $want $want" > "$tmp/out"
  [ "$got" = "$want $want" ]; result "file modes under umask $mask" $? "$tmp/out"
done

echo "outputs: $pass passed, $fail failed"
[ $fail = 0 ]
