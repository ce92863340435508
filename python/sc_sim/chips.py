"""Chip names: sc-sim presets and the JAX device kinds they stand for."""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Chip:
    preset: str       # sc-sim's preset name
    device_kind: str  # jax Device.device_kind
    num_cores: int    # TensorCores per chip reported by the AbstractDevice


_CHIPS = {
    "tpu_v5p": Chip("tpu_v5p", "TPU v5p", 2),
    "tpu_v6e": Chip("tpu_v6e", "TPU v6e", 1),
    "tpu7x": Chip("tpu7x", "TPU7x", 2),
}
_ALIASES = {
    "v5p": "tpu_v5p", "tpu v5p": "tpu_v5p", "tpuv5p": "tpu_v5p",
    "v6e": "tpu_v6e", "tpu v6e": "tpu_v6e", "tpuv6e": "tpu_v6e",
    "7x": "tpu7x", "tpu_7x": "tpu7x", "v7x": "tpu7x", "tpu_v7x": "tpu7x",
}


def names() -> list[str]:
    return sorted(_CHIPS)


def resolve(name: str) -> Chip:
    """The chip for a preset name or a JAX device kind, else ValueError."""
    if not isinstance(name, str):
        raise TypeError(f"chip must be a string, got {name!r}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key in _CHIPS:
        return _CHIPS[key]
    raise ValueError(
        f"unsupported chip {name!r}: sc_sim runs SparseCore kernels on "
        + ", ".join(names()))
