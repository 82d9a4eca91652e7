"""DYNAMIC_UPDATE_SLICE: bit-exact against TFLite Micro (int8, int16, int32, float32;
ranks 1 to 4; start indices inside, past the end and negative, which TFLM clamps;
start indices computed at run time), on the host and as Cortex-M7 firmware under QEMU;
and the refusals (int64 start indices, an update larger than the operand)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import differing_tensors
from support.markers import needs_qemu
from support.shapes import inferred_shape_mismatches
from support.tflite_builder import ModelBuilder

DTYPES = ("int8", "int16", "int32", "float32")
# (operand shape, update shape, start indices): inside, clamped past the end, negative
CASES = [((7,), (3,), (2,)), ((7,), (3,), (6,)), ((4, 5), (2, 3), (1, 2)),
         ((4, 5), (2, 5), (-3, 0)), ((2, 3, 4), (1, 2, 2), (1, 5, 9)),
         ((2, 3, 4, 6), (2, 1, 3, 6), (0, 2, 1, 0)), ((3, 4), (3, 4), (1, 1)),
         ((1, 4, 4, 2), (1, 1, 2, 2), (0, 3, -1, 0))]


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(max(info.min, -30000), min(info.max, 30000) + 1,
                        size=shape).astype(dtype)


def _q(dtype: str) -> dict[str, Any]:
    return {"scale": 0.05, "zero_point": -3} if dtype == "int8" else {}


def _model() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("dynamic update slice cases")
    rng = np.random.default_rng(31)
    out_of: dict[str, int] = {}
    for dtype in DTYPES:
        for k, (xs, us, start) in enumerate(CASES):
            x = b.tensor(xs, dtype, data=_data(rng, xs, dtype), **_q(dtype))
            u = b.tensor(us, dtype, data=_data(rng, us, dtype), **_q(dtype))
            y = b.tensor(xs, dtype, **_q(dtype))
            b.op("DYNAMIC_UPDATE_SLICE", [x, u, b.const(np.asarray(start, np.int32))], [y])
            out_of[f"{dtype}-{k}"] = y
    # start indices computed at run time (the graph input), the operand a graph input
    x = b.tensor((3, 6), "int8", name="x", **_q("int8"))
    s = b.tensor((2,), "int32", name="start")
    u = b.tensor((2, 2), "int8", data=_data(rng, (2, 2), "int8"), **_q("int8"))
    y = b.tensor((3, 6), "int8", name="y", **_q("int8"))
    b.op("DYNAMIC_UPDATE_SLICE", [x, u, s], [y])
    out_of["runtime-start"] = y
    return b.build([x, s], [y]), out_of


MODEL, OUT_OF = _model()
STARTS = ([1, 3], [-2, 7], [2, 4])


def _inputs(start: list[int]) -> list[np.ndarray]:
    x = np.arange(18, dtype=np.int8).reshape(3, 6)
    return [x, np.asarray(start, dtype=np.int32)]


@pytest.mark.parametrize("target", [
    "host", pytest.param("qemu-m7", marks=[pytest.mark.slow, pytest.mark.qemu,
                                           needs_qemu])])
def test_bit_exact_with_tflm(target: str) -> None:
    starts = STARTS if target == "host" else STARTS[1:2]
    for start in starts:
        _, ref = run_tflm(MODEL, _inputs(start))
        _, got = run_nnopt(MODEL, _inputs(start), target=target,
                           options=PlanOptions(order="file"))
        bad = differing_tensors(ref, got, OUT_OF, bytewise=True)
        assert len(OUT_OF) == 33 and not bad, f"start {start}: {bad}"


def test_clamping_is_observed() -> None:
    # the oracle itself: a start past the end writes the update flush with the end
    _, ref = run_tflm(MODEL, _inputs([2, 4]))
    y = ref[OUT_OF["runtime-start"]].reshape(3, 6)
    assert not np.array_equal(y[1:3, 4:6], np.arange(18, dtype=np.int8).reshape(3, 6)[1:3, 4:6])
    np.testing.assert_array_equal(y[0], np.arange(6, dtype=np.int8))


def _single(start: np.ndarray, update: tuple[int, ...] = (2,)) -> bytes:
    b = ModelBuilder()
    x = b.tensor((4,), "float32")
    u = b.tensor(update, "float32")
    y = b.tensor((4,), "float32")
    b.op("DYNAMIC_UPDATE_SLICE", [x, u, b.const(start)], [y])
    return b.build([x, u], [y])


def test_refuses_int64_start_indices() -> None:
    with pytest.raises(UnsupportedError,
                       match=r"DYNAMIC_UPDATE_SLICE.*start indices .* are not int32"):
        check_graph(load_model_bytes(_single(np.asarray([1], np.int64))))


def test_refuses_an_update_larger_than_the_operand() -> None:
    with pytest.raises(UnsupportedError, match=r"DYNAMIC_UPDATE_SLICE.*updated by"):
        check_graph(load_model_bytes(_single(np.asarray([0], np.int32), (5,))))


def test_the_shape_function_gives_the_operand_shape() -> None:
    n, bad = inferred_shape_mismatches(load_model_bytes(MODEL), "DYNAMIC_UPDATE_SLICE")
    assert n == 33 and not bad, bad
