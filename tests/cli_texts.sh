#!/usr/bin/env bash
# tests/cli_texts.sh SC_SIM -- what the listing options and the summaries
# print (lines worked out by hand from the tables and the programs named).
set -u
sim=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
fail=0
has() { # has WHAT TEXT-FILE LINE: the exact line is in the output
  grep -qxF -- "$3" "$2" || { echo "cli_texts: $1: no line '$3'"; fail=1; }
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --list-ops: the format's operations (OPS in lowering/program.h), fields in FIELDS order
"$sim" --list-ops >"$tmp/ops"
has --list-ops "$tmp/ops" "swap                   ref, value                           out"
has --list-ops "$tmp/ops" "async_copy             out, src, dst, sem                   priority, add"
has --list-ops "$tmp/ops" "barrier                -                                    -"
[ "$(sed -n '2,/^$/p' "$tmp/ops" | grep -c .)" = 27 ] || { echo "cli_texts: --list-ops: not the 27 operations of OPS"; fail=1; }
# --list-instructions: the ISA (ISA_OPS in isa/isa.h)
"$sim" --list-instructions >"$tmp/isa"
grep -q '^tpu.iota ' "$tmp/isa" || { echo "cli_texts: --list-instructions lacks tpu.iota"; fail=1; }
grep -q '^swap ' "$tmp/isa" && { echo "cli_texts: --list-instructions lists an operation of the format"; fail=1; }
# --list-chips: each preset's values; tpu7x (column 9) has 2 SparseCores of 16 subcores, 16 lanes (SPEC §2)
"$sim" --list-chips >"$tmp/chips"
for p in "num_cores 2" "num_subcores 16" "num_lanes 16" "dma_setup_cycles 100"; do
  set -- $p
  got=$(awk -v k="$1" '$1 == k { print $10 }' "$tmp/chips")
  [ "$got" = "$2" ] || { echo "cli_texts: --list-chips: tpu7x $1 is '$got', want $2"; fail=1; }
done
# fuzz without --seed names the seed it used
"$sim" fuzz --count 1 --out "$tmp/fz" >"$tmp/fuzz" 2>&1
has fuzz "$tmp/fuzz" "fuzz: seed 1 (the default; --seed S picks another)"
"$sim" fuzz --seed 7 --count 1 --out "$tmp/fz" >"$tmp/fuzz7" 2>&1
grep -q '^fuzz: seed' "$tmp/fuzz7" && { echo "cli_texts: fuzz --seed 7 repeats the seed line"; fail=1; }
# --no-verify says what ran: tests/golden/exec/max_ops_engine.yaml executes 8 operations (its comment)
(cd "$root/tests/golden/exec" && "$sim" max_ops_engine.yaml --no-verify) >"$tmp/nv"
has --no-verify "$tmp/nv" "max_ops_engine.yaml: ok: 8 operations on 1 subcore(s) on the engine only (--no-verify: no reference run, nothing compared)"
# a program of several kernels: the summary lists them (two_kernels.yaml: 4 + 5 operations, one scratch ref each)
(cd "$root/tests/golden/kernels" && "$sim" two_kernels.yaml) >"$tmp/mk"
has kernels "$tmp/mk" "two_kernels.yaml: chip tpu7x, 2 kernels, 3 ref(s), 9 operation(s)"
has kernels "$tmp/mk" "  kernel 1: double, vector_subcore kernel, mesh 1 core(s) x 2 subcore(s), 1 scratch ref(s), 4 operation(s)"
has kernels "$tmp/mk" "  kernel 2: add_one, vector_subcore kernel, mesh 1 core(s) x 1 subcore(s), 1 scratch ref(s), 5 operation(s)"
# emit-pallas writes one kernel: a kernels: program is refused (input error, exit 2), naming the limitation
(cd "$root/tests/golden/kernels" && "$sim" emit-pallas two_kernels.yaml) >/dev/null 2>"$tmp/em"; rc=$?
[ $rc = 2 ] || { echo "cli_texts: emit-pallas of several kernels: exit $rc, want 2"; fail=1; }
has emit-pallas "$tmp/em" "two_kernels.yaml:12:1: error: sc-sim emit-pallas writes a program of one kernel, and this one has 2 (kernels:); emit each kernel from a program of its own"
[ $fail = 0 ] && echo "cli_texts: ok"
exit $fail
