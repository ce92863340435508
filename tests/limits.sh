#!/usr/bin/env bash
# Resource limits: each at, just under and just over its bound.  The
# programs are generated here (some are megabytes) into a temporary folder.
# Usage: tests/limits.sh path/to/sc-sim
set -u
sim=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pass=0 fail=0

# expect NAME EXIT [TEXT]: the last run's exit status and stderr.
check() {
  local name=$1 want=$2 text=${3:-}
  if [ "$got" = "$want" ] && { [ -z "$text" ] || grep -qF -- "$text" err; }; then
    pass=$((pass+1))
  else
    fail=$((fail+1))
    echo "testing limits/$name ... FAILED (exit $got, want $want${text:+, stderr with '$text'})"
    head -3 err
  fi
}
run() { "$sim" "$@" >out 2>err; got=$?; }

header() { printf 'version: 1\nchip: tpu7x\nmesh: {cores: 1, subcores: 1}\n'; }

# operations in a program: 100000
ops() {
  { header; printf 'refs:\n  s: {space: smem, shape: [4], dtype: int32, init: 0}\nbody:\n'
    for ((i = 0; i < $1; i++)); do printf '  - barrier: {}\n'; done; } > ops.yaml
}
ops 99999;  run check ops.yaml; check ops_under 0
ops 100000; run check ops.yaml; check ops_at 0
ops 100001; run check ops.yaml; check ops_over 2 "more than 100000 operations"

# nesting of loop/when bodies: 64
nest() {
  { header; printf 'refs:\n  s: {space: smem, shape: [4], dtype: int32, init: 0}\nbody:\n'
    local ind="  "
    for ((i = 0; i < $1; i++)); do printf '%s- when:\n%s    cond: true\n%s    body:\n' "$ind" "$ind" "$ind"; ind="$ind    "; done
    printf '%s- barrier: {}\n' "$ind"; } > nest.yaml
}
nest 62; run check nest.yaml; check nesting_under 0
nest 63; run check nest.yaml; check nesting_at 0
nest 64; run check nest.yaml; check nesting_over 2 "nested more than 64 deep"

# expression depth: 200 levels (the whole expression is one, so 199 parentheses)
expr() {
  local open close
  open=$(printf '%*s' "$1" '' | tr ' ' '(')
  close=$(printf '%*s' "$1" '' | tr ' ' ')')
  { header; printf 'refs:\n  s: {space: smem, shape: [4], dtype: int32, init: 0}\nbody:\n  - let: {name: v, value: "%s1%s"}\n' "$open" "$close"; } > expr.yaml
}
expr 198; run check expr.yaml; check expr_depth_under 0
expr 199; run check expr.yaml; check expr_depth_at 0
expr 200; run check expr.yaml; check expr_depth_over 2 "nested too deeply"

# shape rank: 8
rank() {
  local dims
  dims=$(printf '1, %.0s' $(seq 1 "$1")); dims=${dims%, }
  { header; printf 'refs:\n  x: {space: hbm, shape: [%s], dtype: int32}\nbody: []\n' "$dims"; } > rank.yaml
}
rank 7; run check rank.yaml; check rank_under 0
rank 8; run check rank.yaml; check rank_at 0
rank 9; run check rank.yaml; check rank_over 2 "supports ranks up to 8"

# bytes of all ref instances: 2**33 (hbm is reserved sparsely, so the
# largest accepted program costs nothing until it is touched)
elems() { { header; printf 'refs:\n  x: {space: hbm, shape: [%s], dtype: int8}\nbody: []\n' "$1"; } > elems.yaml; }
elems 8589934591; run check elems.yaml; check total_under 0
elems 8589934592; run check elems.yaml; check total_at 0
elems 8589934593; run check elems.yaml; check total_over 2 "sc-sim's limit is 2**33"
# subcores of the mesh: 65536 (= 64 x 1024); 65537 is prime, so "over" is 331 x 198
mesh() {
  printf 'version: 1\nchip: {preset: tpu7x, num_cores: %d, num_subcores: %d}\nmesh: {cores: %d, subcores: %d}\n' "$1" "$2" "$1" "$2" > mesh.yaml
  printf 'refs:\n  s: {space: smem, shape: [1], dtype: int32, init: zeros}\nbody:\n  - set: {ref: "s[0]", value: "subcore"}\n' >> mesh.yaml
}
mesh 257 255; run check mesh.yaml; check mesh_under 0
mesh 64 1024; run check mesh.yaml; check mesh_at 0
mesh 331 198; run check mesh.yaml; check mesh_over 2 "the mesh has 65538 subcores (331 cores x 198 subcores); sc-sim's limit is 65536"
mesh 1024 1024; sed -i 's/^mesh: .*/mesh: {cores: 2, subcores: 2}/' mesh.yaml; run check mesh.yaml; check mesh_small_on_big_chip 0

# event log of a run: the two runs' events are compared as they come and
# dropped (sim/run/stream.h), so the queues hold at most 256 events a
# subcore (about 40 KB for a scalar set's), whatever the run's length:
# 100000 sets (200000 events, 24 MB when the logs were kept whole) stay
# under --max-log-mb 1.
logs() {
  printf 'version: 1\nchip: tpu7x\nmesh: {cores: 1, subcores: 1}\nrefs:\n  s: {space: smem, shape: [4], dtype: int32, init: zeros}\nbody:\n' > log.yaml
  printf '  - loop: {var: i, range: [0, %d], body: [{set: {ref: "s[0]", value: i}}]}\n' "$1" >> log.yaml
}
logs 100000; run log.yaml --max-log-mb 1; check log_streamed 0

# 32 subcores each reading 64-byte rows of a 4 GiB HBM ref in a long loop,
# under an 8 GiB address-space limit: a clean limit fault, never an abort
# (the race shadow and the DMA records used to grow with every access until
# the host ran out).  Under this limit the reference's copy of the ref does
# not fit beside the engine's ("out of memory for the program's refs");
# without it --max-ops stops the run, which keeps the test to seconds.
{ printf 'version: 1\nchip: tpu7x\nkernel: vector_subcore\nmesh: {cores: 2, subcores: 16}\nrefs:\n'
  printf '  x: {space: hbm, shape: [67108864, 16], dtype: int32, init: zeros}\n  buf: {space: vmem, shape: [16], dtype: int32}\nbody:\n'
  printf '  - loop:\n      var: i\n      range: [0, 100000000]\n      body:\n'
  printf '        - sync_copy: {src: "x.at[(i * 32 + core * 16 + subcore) %% 67108864]", dst: buf}\n'; } > hbm4g.yaml
# (not under the sanitizers: ASan reserves terabytes of shadow address space,
# which an address-space limit refuses before sc-sim starts)
if [ -z "${SC_SIM_SANITIZED:-}" ]; then
  ( ulimit -v 8388608; "$sim" --max-ops 200000 hbm4g.yaml >out 2>err ); got=$?
  check hbm_4gib_32_subcores 4 "error: fault: limit: "
fi

# YAML anchors in a file: 10000 (libyaml's composer is quadratic in them)
anchors() {
  { header; printf 'refs:\n  s: {space: smem, shape: [4], dtype: int32, init: 0}\nbody:\n'
    for ((i = 0; i < $1; i++)); do printf '  - &a%d barrier: {}\n' "$i"; done; } > anchors.yaml
}
anchors 9999;  run check anchors.yaml; check anchors_under 0
anchors 10000; run check anchors.yaml; check anchors_at 0
anchors 10001; run check anchors.yaml; check anchors_over 2 "anchors.yaml:10007:5: error: the file defines more than 10000 YAML anchors (&name); sc-sim's limit is 10000"

# nodes of the document once aliases are expanded: 1000000 + 2 per node
# written.  x is a list of K = 1001 ones (1002 nodes), y repeats it M = 1002
# times through an alias (no new node), z is a list of P ones.  Written:
# nn = 43 + K + P nodes (the skeleton has 43); expanded: nn + M (K + 1).
# Expanded - 2 nn = M (K + 1) - 43 - K - P = 1002960 - P: the bound is at
# P = 2960.
expansion() {
  { printf 'mesh: {cores: 1, subcores: 1}\nrefs:\n  s: {space: smem, shape: [4], dtype: int32, init: 0}\nbody:\n'
    printf '  - let: {name: x, value: &l [1'; for ((i = 1; i < 1001; i++)); do printf ', 1'; done; printf ']}\n'
    printf '  - let: {name: y, value: [*l'; for ((i = 1; i < 1002; i++)); do printf ', *l'; done; printf ']}\n'
    printf '  - let: {name: z, value: [1'; for ((i = 1; i < $1; i++)); do printf ', 1'; done; printf ']}\n'; } > expansion.yaml
}
expansion 2961; run check expansion.yaml; check expansion_under 0
expansion 2960; run check expansion.yaml; check expansion_at 0
expansion 2959; run check expansion.yaml; check expansion_over 2 "too large once YAML aliases are expanded: it would have more than 1008006 nodes (sc-sim allows 1000000 plus two per node written, 4003 here)"

# registers x subcores: 2**22 slots; on 64 x 1024 subcores, 64 registers
# each.  `sc-sim lower` lowers without running.  A let of a K-element list
# lowers to K constants, K copies, the vector and the let's copy: 2K + 2.
bigmesh() { # the 64 x 1024 mesh and one smem ref
  printf 'version: 1\nchip: {preset: tpu7x, num_cores: 64, num_subcores: 1024}\nmesh: {cores: 64, subcores: 1024}\n'
  printf 'refs:\n  s: {space: smem, shape: [1], dtype: int32, init: zeros}\nbody:\n'
}
regs() {
  bigmesh > regs.yaml
  printf '  - let: {name: a, value: [0' >> regs.yaml
  for ((i = 1; i < $1; i++)); do printf ', 0' >> regs.yaml; done
  printf ']}\n' >> regs.yaml
}
regs 30; run lower regs.yaml; check regs_under 0
regs 31; run lower regs.yaml; check regs_at 0
regs 32; run lower regs.yaml; check regs_over 2 "the lowered program needs 66 registers on each of the mesh's 65536 subcores"
# the same bound on a lowered: text, by register number: %63 is the 64th
asmregs() {
  bigmesh > asmregs.yaml
  printf '  - let: {name: a, value: 1}\n' >> asmregs.yaml
  printf 'lowered: |\n  %%%d = arith.constant imm=1 ty=int64 id=0\n' "$1" >> asmregs.yaml
}
asmregs 62; run lower asmregs.yaml; check asm_regs_under 0
asmregs 63; run lower asmregs.yaml; check asm_regs_at 0
asmregs 64; run lower asmregs.yaml; check asm_regs_over 2 "asmregs.yaml:9:3: error: register number out of range: this mesh allows registers below 64"

# elements of one ref: 2**36, checked with the shape (before the total)
elems 68719476737; run check elems.yaml; check elems_over 2 "limit for one ref is 2**36"

# VMEM of one subcore: tpu7x has 524288 bytes
vmem() { { header; printf 'refs:\n  a: {space: vmem, shape: [%s], dtype: int8}\n  b: {space: vmem, shape: [8], dtype: int8}\nbody: []\n' "$1"; } > vmem.yaml; }
vmem 524279; run check vmem.yaml; check vmem_under 0
vmem 524280; run check vmem.yaml; check vmem_at 0
vmem 524281; run check vmem.yaml; check vmem_over 2 "ref 'b' does not fit in VMEM"

# flow nesting in the YAML text: 256
flow() {
  local open close
  open=$(printf '%*s' "$1" '' | tr ' ' '[')
  close=$(printf '%*s' "$1" '' | tr ' ' ']')
  { header; printf 'refs:\n  x: {space: hbm, shape: [4], dtype: int32}\nbody: []\nname: %s1%s\n' "$open" "$close"; } > flow.yaml
}
flow 255; run check flow.yaml; check flow_under 2 "'name' must be a string"
flow 256; run check flow.yaml; check flow_at 2 "'name' must be a string"
flow 257; run check flow.yaml; check flow_over 2 "nest more than 256 levels deep"

# --max-ops N: a loop of 10 iterations runs 11 operations (the loop and 10 lets)
{ header; printf 'refs:\n  s: {space: smem, shape: [4], dtype: int32, init: 0}\nbody:\n  - loop: {var: i, range: [0, 10], body: [{let: {name: v, value: i}}]}\n'; } > loop.yaml
run loop.yaml --max-ops 12; check max_ops_under 0
run loop.yaml --max-ops 11; check max_ops_at 0
run loop.yaml --max-ops 10; check max_ops_over 4 "fault: limit: the run executed more than 10 operations"

# --max-cycles N: the same loop ends at cycle 32 (timing self-check: tests/golden/timing)
run loop.yaml --max-cycles 33; check max_cycles_under 0
run loop.yaml --stats stats.json; cycles=$(sed -n 's/^  "cycles": \([0-9]*\),/\1/p' stats.json)
run loop.yaml --max-cycles "$cycles"; check max_cycles_at 0
run loop.yaml --max-cycles $((cycles - 1)); check max_cycles_over 4 "fault: limit: the run passed $((cycles - 1)) cycles"

echo "limits: $pass passed, $fail failed"
[ $fail = 0 ]
