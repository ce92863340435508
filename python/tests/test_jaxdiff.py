"""A smoke of the differential campaign: generated kernels judged by the
pinned jax's own lowering and by sc-sim's checker must agree."""
from __future__ import annotations

from sc_sim import jaxdiff


def test_campaign_smoke(chip):
    counts, bad = jaxdiff.campaign(seed=17, count=80, chip=chip)
    assert not bad, "\n".join(f"case {k}: {d}\n  JAX: {o.jax}\n  sc-sim: {o.sc}"
                              for k, d, o, _ in bad)
    assert counts["agree-accept"] > 0 and counts["agree-reject"] > 0
