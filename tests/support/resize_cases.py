"""The cases the RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR test models share: every
(dtype, input size -> output size, options) combination as one op on a constant input,
and one on the graph input."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from nnopt.ir import ResizeOptions
from nnopt.tflite_builder import ModelBuilder

Size = tuple[int, int]


def add_resize_cases(b: ModelBuilder, opcode: str, dtypes: Sequence[str],
                     sizes: Sequence[tuple[Size, Size]], modes: Sequence[ResizeOptions], *,
                     quant: Callable[[str], dict[str, Any]],
                     data: Callable[[str, tuple[int, ...]], np.ndarray]) -> dict[str, int]:
    """One ``opcode`` op a case (batch 2, 3 channels) on the constant ``data(dtype,
    shape)``, quantised as ``quant(dtype)``: the output tensor of each case id
    (dtype-IHxIW-OHxOW-ac<0|1>-hp<0|1>)."""
    out_of: dict[str, int] = {}
    for dtype in dtypes:
        q = quant(dtype)
        for (ih, iw), (oh, ow) in sizes:
            for mode in modes:
                arr = data(dtype, (2, ih, iw, 3))
                x = b.tensor(arr.shape, dtype, data=arr, **q)
                y = b.tensor((2, oh, ow, 3), dtype, **q)
                size = b.const(np.asarray([oh, ow], dtype=np.int32))
                b.op(opcode, [x, size], [y], asdict(mode))
                cid = (f"{dtype}-{ih}x{iw}-{oh}x{ow}-ac{int(mode.align_corners)}"
                       f"-hp{int(mode.half_pixel_centers)}")
                out_of[cid] = y
    return out_of


def add_graph_input_case(b: ModelBuilder, opcode: str, out_hw: Size,
                         quant: dict[str, Any]) -> tuple[int, int]:
    """``opcode`` (half-pixel centers) of the int8 graph input x (1, 3, 3, 2) to y
    (1, *out_hw, 2): the two tensors."""
    x = b.tensor((1, 3, 3, 2), "int8", name="x", **quant)
    y = b.tensor((1, *out_hw, 2), "int8", name="y", **quant)
    b.op(opcode, [x, b.const(np.asarray(out_hw, dtype=np.int32))], [y],
         asdict(ResizeOptions(False, True)))
    return x, y
