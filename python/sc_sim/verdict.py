"""JAX's own verdict on a SparseCore kernel call (filled in below)."""
from __future__ import annotations
import dataclasses
from typing import Any


@dataclasses.dataclass
class Verdict:
    accepted: bool
    module: str | None = None
    exception: BaseException | None = None
    type: str | None = None
    message: str | None = None


def jax_verdict(fn: Any, *args: Any, chip: str = "tpu7x") -> Verdict:
    raise NotImplementedError
