"""Exceptions raised by sc_sim, and the map from sc-sim's reported type names."""
from __future__ import annotations

import builtins

from jax._src.pallas.mosaic.error_handling import \
    VerificationError as _JaxVerificationError
from jaxlib.mlir import ir as _ir


class ScSimError(Exception):
    """Base class of the errors sc_sim raises itself."""


class UnsupportedError(ScSimError, NotImplementedError):
    """A kernel uses something the translation cannot express (yet).

    It subclasses NotImplementedError so that a primitive upstream cannot
    lower on SparseCore, raised here until the C core has an operation for
    it, is caught by the same ``except NotImplementedError`` as upstream's.
    """


class FaultError(ScSimError):
    """A fault at run time (sc-sim exit 4); ``kind`` is sc-sim's fault kind."""

    KINDS = ("race", "oob", "uninit", "deadlock", "semaphore", "divzero", "limit")

    def __init__(self, message: str, kind: str, details: object = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.details = details


class VerificationError(ScSimError):
    """sc-sim's lowering and its reference disagreed (sc-sim exit 3)."""


class MosaicVerificationError(ScSimError, _JaxVerificationError):
    """A rejection sc-sim models from the Mosaic verifiers (SPEC §4.M):
    an instance of JAX's own `VerificationError`, which JAX's lowering
    raises; the message is sc-sim's whole text (JAX's prefix included)."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)


class MLIRError(ScSimError, _ir.MLIRError):
    """An MLIR type JAX's lowering cannot build (ZV1: a vector with a
    dimension of size 0): an instance of MLIR's own `MLIRError`, which
    JAX's lowering raises there; the message is sc-sim's whole text."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)


class InvalidProgramError(ScSimError, ValueError):
    """sc-sim refused the translated program as input (exit 2): for example
    inputs that do not fit the chip, or a translation bug."""


def exception_class(type_name: str) -> type[BaseException]:
    """The Python class for a type name in sc-sim's ``Type: message``."""
    if type_name == "VerificationError":
        return MosaicVerificationError
    if type_name == "MLIRError":
        return MLIRError
    cls = getattr(builtins, type_name, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        return cls
    return ScSimError
