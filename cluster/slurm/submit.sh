#!/usr/bin/env bash
# cluster/slurm/submit.sh -- run an sc-sim campaign as N Slurm shards and a
# merge job (docs/cluster.md).
#
#   cluster/slurm/submit.sh KIND ARGS...
#     KIND fuzz:    ARGS are sc-sim fuzz's: --seed S --count N [...]
#     KIND sweep:   ARGS are sc-sim sweep's: program.yaml --set PARAM=V1,V2,...
#     KIND jaxdiff: ARGS are python -m sc_sim.jaxdiff's: --seed S --count N [--fuzz]
#
# Knobs (environment):
#   SHARDS=4          array tasks; shard K does items i with i mod SHARDS = K
#   OUT=DIR           results: DIR/shards/shard-K.jsonl, DIR/report.txt, DIR/merged.jsonl
#                     (default sc-sim-campaign-DATE; on a shared file system)
#   PARTITION=NAME    sbatch --partition (default: the cluster's default)
#   TIME_LIMIT=T      sbatch --time of each shard and of the merge (default 01:00:00)
#   SBATCH_EXTRA=".." more sbatch options, e.g. "--account=A --qos=Q"
#   SC_SIM, SC_SIM_PYTHON   the binary and the Python with sc_sim (default: sc-sim, python3)
# The seed and count are the campaign's own options (--seed, --count): the
# shards together run exactly the programs or points of one unsharded run.
# Prints "ARRAY_JOB MERGE_JOB".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kind=${1:?usage: submit.sh fuzz|sweep|jaxdiff ARGS...}
shift
shards=${SHARDS:-4}
out=${OUT:-sc-sim-campaign-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/shards"
out=$(cd "$out" && pwd)
opts=(--parsable --time="${TIME_LIMIT:-01:00:00}" --output="$out/slurm-%x-%A_%a.out")
[ -n "${PARTITION:-}" ] && opts+=(--partition="$PARTITION")
# shellcheck disable=SC2206
[ -n "${SBATCH_EXTRA:-}" ] && opts+=($SBATCH_EXTRA)
array=$(sbatch "${opts[@]}" --array=0-$((shards - 1)) "$here/shard.sbatch" "$out" "$shards" "$kind" "$@")
array=${array%%;*}
merge=$(sbatch "${opts[@]}" --dependency=afterok:"$array" "$here/merge.sbatch" "$out" "$kind")
merge=${merge%%;*}
echo "$array $merge"
