#!/bin/sh
# tests/fuzz/make_corpus.sh OUTDIR -- the seed corpus for both harnesses.
#
# Every program of the golden suite (tests/golden/**/*.yaml, which includes
# the robust regressions of tests/golden/robust), every example
# (examples/*.yaml), the programs of tests/golden/npy with their .npy file
# and the hand-written hostile inputs of tests/fuzz/hostile/
# become files of OUTDIR named by the SHA-1 of their contents (so copies
# collapse).  Comment-only lines are removed first: the fuzzers' -max_len is
# 4096 bytes, and the examples' comments would waste most of it.
#
# OUTDIR ends up holding exactly the current seeds.  Two campaigns started at
# once may both run this: files are built in a private folder, hard-linked in
# (atomic) and stale ones removed, so neither sees a half-written seed.
set -eu
out=${1:?usage: make_corpus.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
tmp=$(mktemp -d "${out%/}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
add() { # add FILE: the bytes in $tmp/.f become a seed
  h=$(sha1sum "$tmp/.f" | cut -c1-40)
  mv "$tmp/.f" "$tmp/$h"
  n=$((n + 1))
}
for f in $(find "$root/tests/golden" "$root/examples" "$root/tests/fuzz/hostile" -type f -name '*.yaml' 2>/dev/null | sort); do
  grep -av '^[[:space:]]*#' "$f" > "$tmp/.f" || true
  [ -s "$tmp/.f" ] || cp "$f" "$tmp/.f"   # all comments (or empty): keep as is
  add
done
# a program of tests/golden/npy naming one .npy file, the file's bytes
# after the "#--npy--" line, as the input harness splits them (its PATH
# becomes in.npy, the name the harness gives the file)
for f in $(find "$root/tests/golden/npy" -type f -name '*.yaml' 2>/dev/null | sort); do
  npys=$(grep -o '{npy: [^,}]*' "$f" | sed 's/{npy: //' | sort -u)
  [ "$(printf '%s\n' "$npys" | grep -c .)" = 1 ] || continue
  [ -f "$(dirname "$f")/$npys" ] || continue
  { grep -av '^[[:space:]]*#' "$f" | sed "s|{npy: $npys|{npy: in.npy|"; printf '#--npy--\n'; cat "$(dirname "$f")/$npys"; } > "$tmp/.f"
  add
done
# hostile inputs that are not .yaml files (raw bytes)
for f in $(find "$root/tests/fuzz/hostile" -type f ! -name '*.yaml' ! -name '*.md' ! -name '*.sh' 2>/dev/null | sort); do
  cp "$f" "$tmp/.f"
  add
done
for s in "$tmp"/*; do
  [ -e "$out/${s##*/}" ] || ln "$s" "$out/" 2>/dev/null || true  # a hard link: atomic
done
for s in "$out"/*; do
  [ -e "$tmp/${s##*/}" ] || rm -f "$s"
done
echo "fuzz-seeds: $(ls "$out" | wc -l) seeds from $n files in $out"
