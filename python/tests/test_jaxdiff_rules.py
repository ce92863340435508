"""python -m sc_sim.jaxdiff --rules (issue 18): programs varied from the
goldens of each rule id, emitted by sc-sim emit-pallas, judged by JAX and by
sc-sim's checker.  A smoke of one round over the reachable ids (each id's
golden as written) and SC_SIM_JAXDIFF_RULES_COUNT more programs (default
150, varied): every disagreement must be one of the documented differences
(docs/jax-versions.md), and the round covers 95 % of the reachable ids."""
from __future__ import annotations

import os

from sc_sim import jaxdiff_rules as J

EXTRA = int(os.environ.get("SC_SIM_JAXDIFF_RULES_COUNT", "150"))
# JAX's verdicts no checker can give byte for byte (docs/jax-versions.md)
KNOWN = (
    "MLIRError: ",        # the text prints the emitted kernel's source location
    "OverflowError: ",    # a let of a literal past int32: Python's conversion error
    "NameError: name ",   # emitter: a name bound inside a when's branch function
    "AssertionError: DShapedArray",  # JAX's own assertion on a dynamically sized ds
)


def test_rules_campaign_agrees_and_covers() -> None:
    temps = J.templates()
    ids, why = J.reachable_ids(temps)
    assert set(why) >= set(J.UNREACHABLE)
    records = J.run(11, len(ids) + 1 + EXTRA, temps=temps)
    bad = [(r["index"], r["template"], r["mutations"], r["ours"], r["theirs"]) for r in records
           if r["outcome"] == "disagree" and not any(r["theirs"].startswith(k) for k in KNOWN)]
    assert not bad, bad
    covered = {r["rule"] for r in records if r["outcome"] == "agree"}
    assert len(covered & set(ids)) >= 0.95 * len(ids), sorted(set(ids) - covered)


def test_mutations_keep_the_program_loadable() -> None:
    """Each variation of a golden is still a program (most are)."""
    temps = J.templates()
    records = J.run(12, 60, temps=temps)
    inputs = sum(r["theirs"] == "sc-sim: input error" for r in records)
    assert inputs < 20, inputs
