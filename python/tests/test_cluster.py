"""Sweeps and shards from Python (docs/cluster.md): the jaxdiff campaign's
--shard K/N merged equals the unsharded run, sc_sim.sweep, the plot, and
the Kubernetes manifests the shards rely on."""
from __future__ import annotations

import os
import pathlib
import subprocess

import jax.numpy as jnp
import pytest
import yaml
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from sc_sim import jaxdiff, shard
from helpers import sds, sub, vmesh

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text,want", [(None, (0, 1)), ("0/4", (0, 4)), ("3/4", (3, 4))])
def test_parse_shard(text, want):
    assert shard.parse_shard(text) == want


@pytest.mark.parametrize("text", ["4/4", "1/0", "-1/2", "a/b", "1"])
def test_parse_shard_rejects(text):
    with pytest.raises(ValueError, match="K/N"):
        shard.parse_shard(text)


def test_shards_partition_the_campaign():
    parts = [[i for i in range(10) if shard.mine(i, (k, 4))] for k in range(4)]
    assert parts == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]


def test_jaxdiff_four_shards_merged_equal_unsharded(tmp_path, capsys):
    args = ["--seed", "3", "--count", "8"]
    jaxdiff.main(args + ["--jsonl", str(tmp_path / "all.jsonl")])
    whole = capsys.readouterr().out
    (tmp_path / "shards").mkdir()
    for k in range(4):
        jaxdiff.main(args + ["--shard", f"{k}/4", "--jsonl", str(tmp_path / "shards" / f"shard-{k}.jsonl")])
    capsys.readouterr()
    jaxdiff.main(["--merge", str(tmp_path / "shards")])
    assert capsys.readouterr().out == whole
    merged = shard.read_lines([str(tmp_path / "shards")])
    assert merged == shard.read_lines([str(tmp_path / "all.jsonl")])
    assert [r["index"] for r in merged] == list(range(8))


def test_jaxdiff_merge_reports_a_missing_shard(tmp_path, capsys):
    jaxdiff.main(["--seed", "3", "--count", "4", "--shard", "0/2", "--jsonl", str(tmp_path / "a.jsonl")])
    assert jaxdiff.main(["--merge", str(tmp_path / "a.jsonl")]) == 3
    assert "2 kernel(s) missing (first 1)" in capsys.readouterr().err


def _copy_kernel(rows):
    @pl.kernel(out_type=sds((rows, 16)), mesh=vmesh(1, 1), scratch_types=[pltpu.VMEM((rows, 16), jnp.int32)])
    def copy(x_hbm, o_hbm, buf):
        pltpu.sync_copy(x_hbm, buf)
        pltpu.sync_copy(buf, o_hbm)
    return copy


def test_sweep_from_python():
    x = jnp.arange(64 * 16, dtype=jnp.int32).reshape(64, 16)
    rows = sc_sim.sweep(lambda x: _copy_kernel(64)(x), x, grid={"dma_bytes_per_cycle": [16, 64]})
    assert [r["params"] for r in rows] == [{"dma_bytes_per_cycle": 16}, {"dma_bytes_per_cycle": 64}]
    assert all(r["verdict"] == "ok" and r["kernel"] == 0 for r in rows)
    # two DMAs of 64 x 16 x 4 = 4096 bytes: 4096/16 - 4096/64 = 192 engine cycles more each at 16 B/cycle
    assert rows[0]["cycles"] - rows[1]["cycles"] == 2 * 192


def test_sweep_bad_grid_is_a_value_error():
    from sc_sim.sweep import sweep_program
    with pytest.raises(ValueError, match="did you mean 'num_lanes'"):
        sweep_program(str(ROOT / "examples" / "dma_gather.yaml"), {"num_lane": [8]})


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from sc_sim import plot
    out = tmp_path / "r.jsonl"
    subprocess.run([os.environ["SC_SIM_BINARY"], "sweep", str(ROOT / "examples" / "dma_gather.yaml"),
                    "--set", "dma_bytes_per_cycle=8,64", "--set", "hbm_bytes_per_second=1e11,1e12", "--out", str(out)],
                   check=True, capture_output=True)
    assert plot.main([str(out), "-o", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _job(name):
    docs = list(yaml.safe_load_all((ROOT / "cluster" / "k8s" / name).read_text()))
    assert len(docs) == 1 and docs[0]["kind"] == "Job" and docs[0]["apiVersion"] == "batch/v1"
    return docs[0]


def test_k8s_indexed_job_fields():
    job = _job("indexed-job.yaml")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    c = spec["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in c["env"]}
    assert spec["completions"] == spec["parallelism"] == int(env["SHARDS"]) == 4
    cmd = c["command"][2]
    assert '--shard "$JOB_COMPLETION_INDEX/$SHARDS"' in cmd
    assert '--jsonl "$RESULTS/shard-$JOB_COMPLETION_INDEX.jsonl"' in cmd
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    assert env["RESULTS"] in mounts
    assert spec["template"]["spec"]["restartPolicy"] == "Never"


def test_k8s_commands_run_and_merge(tmp_path):
    """The manifests' commands, run here with each pod's index: the merge
    equals an unsharded campaign of the same seed and count."""
    job, merge = _job("indexed-job.yaml"), _job("merge-job.yaml")
    c = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in c["env"]}
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "sc-sim").symlink_to(os.environ["SC_SIM_BINARY"])
    base = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", RESULTS=str(tmp_path / "results"),
                SEED="9", COUNT="24", SHARDS=env["SHARDS"])
    (tmp_path / "results").mkdir()
    for k in range(job["spec"]["completions"]):
        subprocess.run(c["command"], env=dict(base, JOB_COMPLETION_INDEX=str(k)), check=True, capture_output=True)
    m = merge["spec"]["template"]["spec"]["containers"][0]
    subprocess.run(m["command"], env=base, check=True)
    report = (tmp_path / "results" / "report.txt").read_text()
    whole = subprocess.run(["sc-sim", "fuzz", "--seed", "9", "--count", "24", "--out", str(tmp_path / "results" / "repro")],
                           env=base, capture_output=True, text=True).stdout
    assert report.splitlines()[-1] == whole.splitlines()[-1]
    assert report.splitlines()[-1].startswith("fuzz: 24 programs")
