import os, sys; H = os.path.dirname(os.path.abspath(__file__)); sys.path[:0] = [H + '/../..', H + '/..']  # noqa -- regenerates seeded.mlir and seeded.yaml
import jax, jax.numpy as jnp, numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from helpers import sds, sub, vmesh
from sc_sim.runner import chip_scope
from sc_sim import mosaic
import sc_sim, os, shutil
x = (np.arange(64, dtype=np.int32) * 3 - 20).reshape(4, 16)
with chip_scope("tpu7x"):
    @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 4),
               scratch_types=[pltpu.VMEM((16,), jnp.int32), pltpu.VMEM((16,), jnp.int32),
                              pltpu.SemaphoreType.DMA(())])
    def seeded(x_hbm, o_hbm, buf, buf2, sem):
        pltpu.async_copy(x_hbm.at[sub()], buf, sem).wait()
        @pl.loop(0, 3)
        def _(i):
            buf[...] = jnp.where(lax.iota(jnp.int32, 16) > i, buf[...] - 5, buf[...] + 7)
        buf2[pl.ds(0, 8)] = buf[pl.ds(8, 8)] * 3
        buf2[pl.ds(8, 8)] = buf[pl.ds(0, 8)]
        pltpu.sync_copy(buf2, o_hbm.at[sub()])
t = mosaic.kernel_module(seeded, x)
d = H
open(f'{d}/seeded.mlir','w').write(t)
shutil.rmtree('/tmp/seeded', ignore_errors=True); os.makedirs('/tmp/seeded')
p = sc_sim.to_program(seeded, jnp.asarray(x), out_dir='/tmp/seeded')
print(p)
