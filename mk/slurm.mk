# mk/slurm.mk -- the Slurm scripts of cluster/slurm on this machine (included by the Makefile).
# make test-slurm   installs slurm-wlm and munge from Debian when missing, starts munged,
#                   slurmctld and slurmd of its own, runs a 4-shard fuzz campaign and a
#                   4-shard sweep with their merge jobs, checks merged == unsharded and
#                   stops the daemons (tests/slurm.sh; under 10 minutes on 2 cores)
test-slurm: all
	@timeout -k 20 570 tests/slurm.sh $(BUILD)/sc-sim

.PHONY: test-slurm
