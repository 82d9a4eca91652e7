"""How an ONNX value lives in the IR while importing: its tensor and its layout.

nnopt's kernels are NHWC. An ONNX value keeps its ONNX shape in the model's interface,
but inside it is held in whatever axis order suits its producer: ``perm`` says which
(the IR tensor is ``numpy.transpose(onnx_value, perm)``). Converting between orders is
a TRANSPOSE op, or a RESHAPE when only size-1 axes move (no data moves).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NHWC = (0, 2, 3, 1)  # NCHW value held as NHWC
NLC = (0, 2, 1)  # NCL (1-D conv/pool) held as NLC


def identity(rank: int) -> tuple[int, ...]:
    return tuple(range(rank))


def permuted(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(shape[a]) for a in perm)


def relative(src: Sequence[int], dst: Sequence[int]) -> tuple[int, ...]:
    """The TRANSPOSE permutation that takes a tensor in layout ``src`` to ``dst``."""
    return tuple(list(src).index(a) for a in dst)


def is_memory_noop(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """True when transposing ``shape`` by ``perm`` moves no element (only size-1 axes
    change place), so a RESHAPE does it."""
    order = [a for a in perm if shape[a] != 1]
    return order == sorted(order)


@dataclass
class Value:
    tensor: int
    perm: tuple[int, ...]
    # "f": the IR tensor holds the ONNX value; "dq": the ONNX value is the float
    # dequantisation of the int8 IR tensor (a DequantizeLinear output in a QDQ graph).
    kind: str = "f"
    # 2-D values flattened from a channels-last tensor: IR[:, j] = ONNX[:, colperm[j]];
    # ``flat_of`` names the ONNX value it was flattened from.
    colperm: np.ndarray | None = None
    flat_of: str | None = None
