"""Small helpers for the kernels of the test suite."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental.pallas import tpu_sc as plsc

CORE, SUB = "core", "subcore"


def vmesh(cores: int = 1, subcores: int = 1) -> plsc.VectorSubcoreMesh:
    return plsc.VectorSubcoreMesh(core_axis_name=CORE, subcore_axis_name=SUB,
                                  num_cores=cores, num_subcores=subcores)


def smesh(cores: int = 1) -> plsc.ScalarSubcoreMesh:
    return plsc.ScalarSubcoreMesh(axis_name=CORE, num_cores=cores)


def sds(shape, dtype=jnp.int32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(shape), dtype)


def core() -> jax.Array:
    return jax.lax.axis_index(CORE)


def sub() -> jax.Array:
    return jax.lax.axis_index(SUB)


def lane_iota(lanes: int) -> jax.Array:
    return jax.lax.iota(jnp.int32, lanes)
