"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, LOGICAL_AND, LOGICAL_OR
and SELECT_V2: bit-exact against TFLite Micro in one multi-op model (one build, one
oracle run): float32 (with ties and signed zeros), int32, int64, bool (equalities) and int8
with different input quantisations (TFLM rescales both sides), broadcasting of every
kind; SELECT_V2 of int8, int16 and float32 with three-way broadcasting."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import check_graph
from support.cases import (
    assert_cortex_m7_matches,
    case_model_tests,
)
from support.markers import slow_on_qemu
from support.tflite_builder import ModelBuilder

COMPARISONS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1, 5), (1, 4, 1)), ((7,), (1,)),
          ((1, 2, 3, 4, 5), (2, 1, 4, 1))]
SELECT_SHAPES = [((2, 3, 4), (2, 3, 4), (2, 3, 4)), ((4,), (2, 3, 4), (1,)),
                 ((3, 1), (1, 5), (3, 5)), ((1,), (1,), (1,)), ((2, 1, 3, 1), (1, 4, 1, 5), (5,))]
INT8_QUANT = [((0.05, 0), (0.05, 0)), ((0.05, 3), (0.1, -7)), ((0.02, -128), (0.03, 127))]


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":  # few distinct values: many ties
        return rng.choice(np.asarray([-1.5, -0.0, 0.0, 0.5, 2.0, np.float32(1e-20)],
                                     dtype=np.float32), size=shape)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "int32":
        return rng.integers(-3, 4, size=shape).astype(np.int32)
    if dtype == "int64":  # ties, and values that differ only above bit 32
        return rng.choice(np.asarray([-(1 << 40), -3, 0, 3, 1 << 40, (1 << 40) + 3],
                                     dtype=np.int64), size=shape)
    return rng.integers(-128, 128, size=shape).astype(np.int8)


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("comparison cases")
    rng = np.random.default_rng(3)
    out_of: dict[str, int] = {}

    def case(cid: str, opcode: str, dtype: str, sa: tuple[int, ...], sb: tuple[int, ...],
             qa: dict[str, Any], qb: dict[str, Any]) -> None:
        x1 = b.tensor(sa, dtype, data=_data(rng, sa, dtype), **qa)
        x2 = b.tensor(sb, dtype, data=_data(rng, sb, dtype), **qb)
        y = b.tensor(tuple(np.broadcast_shapes(sa, sb)), "bool")
        b.op(opcode, [x1, x2], [y])
        out_of[cid] = y

    for opcode in COMPARISONS:
        for k, (sa, sb) in enumerate(SHAPES):
            for dtype in ("float32", "int32", "int64"):
                case(f"{opcode.lower()}-{dtype}-{k}", opcode, dtype, sa, sb, {}, {})
            for j, ((s1, z1), (s2, z2)) in enumerate(INT8_QUANT):
                case(f"{opcode.lower()}-int8-{k}-q{j}", opcode, "int8", sa, sb,
                     {"scale": s1, "zero_point": z1}, {"scale": s2, "zero_point": z2})
            if opcode in ("EQUAL", "NOT_EQUAL"):
                case(f"{opcode.lower()}-bool-{k}", opcode, "bool", sa, sb, {}, {})
    for opcode in ("LOGICAL_AND", "LOGICAL_OR"):
        for k, (sa, sb) in enumerate(SHAPES):
            case(f"{opcode.lower()}-{k}", opcode, "bool", sa, sb, {}, {})
    for dtype in ("int8", "int16", "float32"):
        for k, (sc, sx, sy) in enumerate(SELECT_SHAPES):
            out_shape = tuple(np.broadcast_shapes(sc, sx, sy))
            q: dict[str, Any] = {"scale": 0.05, "zero_point": 2} if dtype != "float32" else {}
            cond = b.tensor(sc, "bool", data=_data(rng, sc, "bool"))
            xv = b.tensor(sx, dtype, data=(rng.standard_normal(sx) * 50).astype(dtype), **q)
            yv = b.tensor(sy, dtype, data=(rng.standard_normal(sy) * 50).astype(dtype), **q)
            out = b.tensor(out_shape, dtype, **q)
            b.op("SELECT_V2", [cond, xv, yv], [out])
            out_of[f"select_v2-{dtype}-{k}"] = out
    # graph input: int8 activation compared with a constant, then combined
    x = b.tensor((1, 4, 6), "int8", name="x", scale=0.1, zero_point=2)
    g = b.tensor((1, 4, 6), "bool")
    b.op("GREATER", [x, b.const(np.asarray([5], dtype=np.int8), scale=0.2, zero_point=-1)],
         [g])
    e = b.tensor((1, 4, 6), "bool")
    b.op("LESS_EQUAL", [x, b.const(np.asarray([-3], dtype=np.int8), scale=0.1, zero_point=2)],
         [e])
    y = b.tensor((1, 4, 6), "bool", name="y")
    b.op("LOGICAL_OR", [g, e], [y])
    out_of["graph-input"] = y
    return b.build([x], [y]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-12, 12, dtype=np.int8).reshape(1, 4, 6) * 3]


results, test_bit_exact = case_model_tests(MODEL, INPUTS, OUT_OF, same_dtype=True)


def test_ordered_comparison_of_bools_is_refused() -> None:
    b = ModelBuilder()
    x1, x2 = b.tensor((3,), "bool"), b.tensor((3,), "bool")
    y = b.tensor((3,), "bool")
    b.op("GREATER", [x1, x2], [y])
    with pytest.raises(UnsupportedError,
                       match=r"op 0 \(GREATER\).*int8 or int32 or int64 or float32"):
        check_graph(load_model_bytes(b.build([x1, x2], [y])))


@pytest.mark.parametrize("dtype", ["uint8", "int16"])
def test_comparisons_tflm_does_not_invoke_are_refused(dtype: str) -> None:
    """The installed tflite-micro interpreter fails to invoke EQUAL/GREATER on uint8 and
    int16 inputs: nnopt refuses them by name rather than guess."""
    b = ModelBuilder()
    x1 = b.tensor((3,), dtype, scale=0.05, zero_point=0)
    x2 = b.tensor((3,), dtype, scale=0.05, zero_point=0)
    y = b.tensor((3,), "bool")
    b.op("EQUAL", [x1, x2], [y])
    with pytest.raises(UnsupportedError, match=rf"op 0 \(EQUAL\).*{dtype.upper()}"):
        check_graph(load_model_bytes(b.build([x1, x2], [y])))


@slow_on_qemu
def test_cases_on_cortex_m7() -> None:
    """Every case as Cortex-M7 firmware under QEMU, against TFLM on the host."""
    assert_cortex_m7_matches(MODEL, INPUTS, OUT_OF)
