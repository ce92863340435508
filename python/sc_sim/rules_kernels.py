"""Several kernels in one jitted function.

Each `pl.kernel` (an `mpmd_map` equation) of a jitted function runs on
sc-sim as its own program, in the order XLA runs them; what one kernel
writes reaches the next through the arrays XLA hands on.  Kernels over
refs made with `jax.new_ref` / `jax.empty_ref` (and `pl.run_state`) reach
`mpmd_map` with `input_output_aliases`: an aliased output is its input's
buffer, so the translator binds both kernel arguments to one sc-sim ref
and reads the output back from it.
"""
from __future__ import annotations

from typing import Any


def alias_map(aliases: Any) -> dict[int, int]:
    """`input_output_aliases` (a mapping or pairs) as input -> output."""
    if not aliases:
        return {}
    items = aliases.items() if hasattr(aliases, "items") else aliases
    return {int(i): int(o) for i, o in items}


def aliased_outputs(aliases: dict[int, int], n_inputs: int) -> dict[int, int]:
    """Kernel argument position of each aliased output -> its input's."""
    return {n_inputs + o: i for i, o in aliases.items()}
