"""REDUCE_MAX, REDUCE_MIN, SUM, ARG_MAX, ARG_MIN and CUMSUM: bit-exact against TFLite
Micro, in one multi-op model (one build, one oracle run; on the host and as Cortex-M7
firmware): the reductions over single, several, negative, repeated and all axes,
keep_dims or not, int8 and float32, SUM also int16 (requantised); ARG_MAX/ARG_MIN along
every axis with many ties; CUMSUM (float32 and int8, with zero points and wrapping long
axes) along every axis, exclusive and reverse."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ReducerOptions
from nnopt.ops import check_graph
from support.cases import (
    assert_cortex_m7_matches,
    case_model_tests,
)
from support.markers import slow_on_qemu
from support.tflite_builder import ModelBuilder

REDUCE_AXES: list[list[int]] = [[1], [0, 2], [-1], [1, 3], [0, 1, 2, 3], [1, 1, -3], [3, 0],
                                [2]]
REDUCE_SHAPE = (2, 3, 4, 5)


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return (rng.standard_normal(shape) * 3).astype(np.float32)
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("reduce cases")
    rng = np.random.default_rng(14)
    out_of: dict[str, int] = {}
    for opcode, dtypes in (("REDUCE_MAX", ("int8", "float32")),
                           ("REDUCE_MIN", ("int8", "float32")),
                           ("SUM", ("int8", "int16", "float32"))):
        for dtype in dtypes:
            q: dict[str, Any] = ({"scale": 0.02, "zero_point": 7} if dtype == "int8" else
                                 {"scale": 0.001, "zero_point": 0} if dtype == "int16" else {})
            for k, axes in enumerate(REDUCE_AXES):
                for keep in (False, True):
                    rank = len(REDUCE_SHAPE)
                    red = {a % rank for a in axes}
                    out_shape = tuple(1 if d in red else n for d, n in enumerate(REDUCE_SHAPE)
                                      if keep or d not in red)
                    x = b.tensor(REDUCE_SHAPE, dtype, data=_rand(rng, REDUCE_SHAPE, dtype), **q)
                    # SUM requantises: a wider output scale (int8: another zero point)
                    qy = ({"scale": 0.3, "zero_point": -3} if (opcode, dtype) == ("SUM", "int8")
                          else {"scale": 0.0071, "zero_point": 0} if dtype == "int16" else q)
                    y = b.tensor(out_shape, dtype, **qy)
                    b.op(opcode, [x, b.const(np.asarray(axes, dtype=np.int32))], [y],
                         ReducerOptions(keep))
                    out_of[f"{opcode.lower()}-{dtype}-{k}-keep{int(keep)}"] = y
    for opcode in ("ARG_MAX", "ARG_MIN"):
        for dtype in ("int8", "float32"):
            for axis in (0, 1, 2, 3, -1, -3):
                rank = len(REDUCE_SHAPE)
                out_shape = tuple(n for d, n in enumerate(REDUCE_SHAPE) if d != axis % rank)
                # few distinct values: ties, where the first index must win
                data = rng.integers(-2, 3, size=REDUCE_SHAPE).astype(dtype)
                x = b.tensor(REDUCE_SHAPE, dtype, data=data,
                             **({"scale": 0.1, "zero_point": 1} if dtype == "int8" else {}))
                y = b.tensor(out_shape, "int32")
                b.op(opcode, [x, b.const(np.asarray([axis], dtype=np.int32))], [y],
                     {"output_type": 2})  # TensorType.INT32
                out_of[f"{opcode.lower()}-{dtype}-axis{axis}"] = y
    for axis in (0, 1, 2, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                shape = (2, 3, 4)
                x = b.tensor(shape, "float32", data=_rand(rng, shape, "float32"))
                y = b.tensor(shape, "float32")
                b.op("CUMSUM", [x, b.const(np.asarray([axis], dtype=np.int32))], [y],
                     {"exclusive": exclusive, "reverse": reverse})
                out_of[f"cumsum-axis{axis}-ex{int(exclusive)}-rev{int(reverse)}"] = y
    # int8 CUMSUM: TFLM's rescaling, zero points, long axes (the int32 accumulator wraps)
    cum8 = [((2, 3, 4), 1, (0.05, 3), (0.2, -10)), ((2, 3, 4), -1, (0.1, -128), (0.4, 127)),
            ((5, 7), 0, (0.02, 0), (0.05, 0)), ((1, 40, 3), 1, (0.05, -128), (0.05, -128)),
            ((3, 64), 1, (0.01, 100), (0.3, 0))]
    for k, (shape, axis, (si, zi), (so, zo)) in enumerate(cum8):
        for exclusive in (False, True):
            for reverse in (False, True):
                x = b.tensor(shape, "int8", data=_rand(rng, shape, "int8"), scale=si,
                             zero_point=zi)
                y = b.tensor(shape, "int8", scale=so, zero_point=zo)
                b.op("CUMSUM", [x, b.const(np.asarray([axis], dtype=np.int32))], [y],
                     {"exclusive": exclusive, "reverse": reverse})
                out_of[f"cumsum-int8-{k}-ex{int(exclusive)}-rev{int(reverse)}"] = y
    # a graph input through a reduction (an activation, not a constant)
    x = b.tensor((1, 4, 6), "int8", name="x", scale=0.05, zero_point=-3)
    z = b.tensor((1, 6), "int8", name="z", scale=0.05, zero_point=-3)
    b.op("REDUCE_MAX", [x, b.const(np.asarray([1], dtype=np.int32))], [z], ReducerOptions(False))
    out_of["graph-input-reduce-max"] = z
    return b.build([x], [z]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-12, 12, dtype=np.int8).reshape(1, 4, 6) * 5]


results, test_bit_exact = case_model_tests(MODEL, INPUTS, OUT_OF)


@pytest.mark.parametrize(("opcode", "dtype", "out_scale", "match"), [
    ("REDUCE_MAX", "int8", 0.2, r"op 0 \(REDUCE_MAX\).*quantisation"),  # requantisation
    ("SUM", "int32", 0.1, r"op 0 \(SUM\).*int8 or int16 or float32"),
], ids=["reduce-max-requantisation", "sum-int32"])
def test_reduction_refuses(opcode: str, dtype: str, out_scale: float, match: str) -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4, 3), dtype, scale=0.1, zero_point=0)
    y = b.tensor((1, 3), dtype, scale=out_scale, zero_point=0)
    b.op(opcode, [x, b.const(np.asarray([1], dtype=np.int32))], [y], ReducerOptions())
    with pytest.raises(UnsupportedError, match=match):
        check_graph(load_model_bytes(b.build([x], [y])))


@pytest.mark.parametrize("dtype", ["int16", "int32"])
def test_cumsum_refuses_what_tflm_does_not_allocate(dtype: str) -> None:
    """The installed tflite-micro fails to allocate int16 and int32 CUMSUM: refused by
    name, with the supported dtypes."""
    b = ModelBuilder()
    x = b.tensor((2, 5), dtype, scale=0.01, zero_point=0)
    y = b.tensor((2, 5), dtype, scale=0.01, zero_point=0)
    b.op("CUMSUM", [x, b.const(np.asarray([1], dtype=np.int32))], [y])
    with pytest.raises(UnsupportedError, match=rf"op 0 \(CUMSUM\).*{dtype.upper()}.*int8 or "
                                               "float32"):
        check_graph(load_model_bytes(b.build([x], [y])))


@slow_on_qemu
def test_cases_on_cortex_m7() -> None:
    """Every case as Cortex-M7 firmware under QEMU, against TFLM on the host."""
    assert_cortex_m7_matches(MODEL, INPUTS, OUT_OF)
