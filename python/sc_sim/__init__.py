"""sc_sim: run JAX Pallas SparseCore kernels on sc-sim, on any CPU host."""
from .api import interpret, run, to_program
from .runner import (DisagreementWarning, RunRecord, ScSimWarning, abstract_mesh,
                     chip_scope)
from .errors import (FaultError, InvalidProgramError, MosaicVerificationError,
                     ScSimError, UnsupportedError, VerificationError)
from .verdict import Verdict, jax_verdict
from .sweep import sweep
from .profile import ProfileRow, format_profile

__all__ = ["interpret", "run", "to_program", "jax_verdict", "Verdict", "RunRecord",
           "FaultError", "VerificationError", "UnsupportedError", "ScSimError",
           "InvalidProgramError", "MosaicVerificationError", "ScSimWarning",
           "abstract_mesh", "chip_scope", "DisagreementWarning", "sweep", "ProfileRow", "format_profile"]
__version__ = "0.1.0"
