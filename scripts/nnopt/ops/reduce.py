"""REDUCE_MAX, REDUCE_MIN and SUM over constant axes (keep_dims or not), ARG_MAX and
ARG_MIN along one constant axis: options and traits. The lowering is
:mod:`nnopt.lowering.reduce`; the model blob does not carry these kernels yet (refused by
name there)."""

from __future__ import annotations

from .base import OpDef
from .pool import read_reducer

DEFINITIONS = (
    OpDef("REDUCE_MAX", "RMAX", "reduce", read_reducer, cost="reduce_taps", blob=False),
    OpDef("REDUCE_MIN", "RMIN", "reduce", read_reducer, cost="reduce_taps", blob=False),
    OpDef("SUM", "SUM", "reduce", read_reducer, cost="reduce_taps", blob=False),
    OpDef("ARG_MAX", "ARGMAX", "reduce", cost="reduce_taps", blob=False),
    OpDef("ARG_MIN", "ARGMIN", "reduce", cost="reduce_taps", blob=False),
)
