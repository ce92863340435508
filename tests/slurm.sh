#!/usr/bin/env bash
# tests/slurm.sh SC_SIM -- the Slurm scripts of cluster/slurm on this one
# machine (make test-slurm; docs/cluster.md).
#
# Installs slurm-wlm and munge from Debian when they are missing, starts a
# munged, a slurmctld and a slurmd of its own (a configuration, key, socket,
# state and logs in a temporary folder; one node with this machine's
# cores; ports of their own), submits a 4-shard fuzz campaign and a
# 4-shard sweep with cluster/slurm/submit.sh (a job array and a merge job
# with --dependency=afterok each), waits for the merge jobs, and checks that
# each merged report equals an unsharded run of the same seed and grid.  It
# stops the daemons it started by their pids (and a munged that the
# package install started), whatever happens.  Bounded: every wait has a
# deadline, and the whole test gives up after SLURM_TEST_SECONDS (540).
set -u
sim=$(readlink -f "${1:?usage: tests/slurm.sh path/to/sc-sim}")
here=$(cd "$(dirname "$0")/.." && pwd)
budget=${SLURM_TEST_SECONDS:-540}
t0=$(date +%s)
tmp=$(mktemp -d /tmp/sc-sim-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
pass=0 fail=0
ok() { echo "testing $1 ... passed"; pass=$((pass + 1)); }
ko() { echo "testing $1 ... FAILED ($2)"; fail=$((fail + 1)); }
left() { echo $((budget - ($(date +%s) - t0))); }

stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  pids=()
}
finish() {
  stop
  if [ "$fail" != 0 ] || [ "$pass" = 0 ]; then
    for f in "$tmp"/*.log; do [ -f "$f" ] && { echo "--- $f (last lines)"; tail -15 "$f"; }; done
  fi
  rm -rf "$tmp"
}
trap finish EXIT
trap 'exit 1' INT TERM

# 1. the packages
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "make test-slurm needs slurm-wlm and munge: run 'sudo apt-get install -y slurm-wlm munge' and then make test-slurm again" >&2
    exit 1
  fi
  before=$(pgrep -x munged | tr '\n' ' ')
  echo "slurm: installing slurm-wlm and munge from Debian"
  (DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge ||
    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge)) > "$tmp/apt.log" 2>&1 ||
    { tail -20 "$tmp/apt.log"; exit 1; }
  for p in $(pgrep -x munged); do # a munged the install started (its service) is ours to stop
    [[ " $before " == *" $p "* ]] || pids+=("$p")
  done
fi
echo "slurm: $(slurmctld -V), $(munged -V 2>&1 | awk '{print $1}')"

# 2. munged with a key and socket of its own
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 600 "$tmp/munge.key"
munged --force --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" || { ko "munged starts" "exit $?"; exit 1; }
for _ in $(seq 50); do [ -s "$tmp/munged.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$tmp/munged.pid")")

# 3. slurmctld and slurmd: one node with this machine's cores
node=$(hostname -s)
cpus=$(nproc)
port=$((16800 + RANDOM % 1000))
mkdir -p "$tmp/state" "$tmp/spool"
cat > "$tmp/slurm.conf" <<CONF
ClusterName=sc-sim-test
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1000))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$node CPUs=$cpus State=UNKNOWN
PartitionName=sc-sim Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" > "$tmp/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" > "$tmp/slurmd.out.log" 2>&1 &
pids+=($!)
state=
for _ in $(seq 120); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null | head -1)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] && ok "slurmctld and slurmd up: node $node ($cpus cores) idle" || { ko "the node comes up" "state '$state'"; exit 1; }

# 4. the campaigns
gather=$here/examples/dma_gather.yaml
fz=(--seed 5 --count 80)
grid=(--set dma_bytes_per_cycle=8,16,32,64,128 --set hbm_bytes_per_second=1e11,1e12)
export SC_SIM=$sim SHARDS=4 TIME_LIMIT=00:05:00
read -r fa fm < <(OUT=$tmp/fuzz "$here/cluster/slurm/submit.sh" fuzz "${fz[@]}" --out "$tmp/fuzz/repro") || { ko "submit the fuzz campaign" "sbatch failed"; exit 1; }
read -r sa sm < <(OUT=$tmp/sweep "$here/cluster/slurm/submit.sh" sweep "$gather" "${grid[@]}") || { ko "submit the sweep" "sbatch failed"; exit 1; }
ok "submitted: fuzz array $fa + merge $fm, sweep array $sa + merge $sm"
dep=$(scontrol show job "$fm" 2>/dev/null | grep -o 'Dependency=[^ ]*')
while [ "$(left)" -gt 30 ] && [ -n "$(squeue -h -j "$fa,$fm,$sa,$sm" 2>/dev/null)" ]; do sleep 1; done
[ -z "$(squeue -h -j "$fa,$fm,$sa,$sm" 2>/dev/null)" ] && ok "all jobs ended ($(($(date +%s) - t0)) s so far)" || ko "the jobs end in time" "$(squeue)"

# The merge job waited for its array: afterok while the array ran, and its
# report is newer than every shard's lines.
newer=yes
for f in "$tmp"/fuzz/shards/*.jsonl; do [ "$tmp/fuzz/report.txt" -nt "$f" ] || [ ! "$tmp/fuzz/report.txt" -ot "$f" ] || newer=no; done
[[ "$dep" == "Dependency=afterok:${fa}"* || "$dep" == "Dependency=(null)" ]] && [ "$newer" = yes ] &&
  ok "the fuzz merge job ran after its array ($dep when submitted)" || ko "fuzz merge dependency" "$dep, report newer than the shards: $newer"

# 5. merged == unsharded
"$sim" fuzz "${fz[@]}" --out "$tmp/fuzz/repro" | grep -v ' s, ' > "$tmp/fuzz-all.txt"
if [ -f "$tmp/fuzz/report.txt" ] && [ "$(ls "$tmp"/fuzz/shards/*.jsonl | wc -l)" = 4 ] && cmp -s "$tmp/fuzz/report.txt" "$tmp/fuzz-all.txt"; then
  ok "fuzz: 4 Slurm shards merged == unsharded: $(grep '^fuzz: 80 programs' "$tmp/fuzz-all.txt" | cut -c1-60)..."
else ko "fuzz: merged == unsharded" "$(diff "$tmp/fuzz/report.txt" "$tmp/fuzz-all.txt" 2>&1 | head -5)"; fi
"$sim" sweep "$gather" "${grid[@]}" --out "$tmp/sweep-all.jsonl" > "$tmp/sweep-all.txt"
strip() { sed 's/, "host_seconds": [0-9.]*//' "$1"; }
if [ -f "$tmp/sweep/report.txt" ] && cmp -s "$tmp/sweep/report.txt" "$tmp/sweep-all.txt" &&
  [ "$(strip "$tmp/sweep/merged.jsonl")" = "$(strip "$tmp/sweep-all.jsonl")" ]; then
  ok "sweep: 4 Slurm shards merged == unsharded ($(wc -l < "$tmp/sweep-all.jsonl") points, table and JSON lines)"
else ko "sweep: merged == unsharded" "$(diff "$tmp/sweep/report.txt" "$tmp/sweep-all.txt" 2>&1 | head -5)"; fi

stop
echo "slurm: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
[ "$fail" = 0 ]
