"""RESIZE_NEAREST_NEIGHBOR: bit-exact against TFLite Micro (int8, int16 and float32;
up- and down-sampling by integer and fractional factors; align_corners and
half_pixel_centers), in one multi-op model (one build, one oracle run)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ResizeOptions
from nnopt.lowering.resize import nearest_indices
from nnopt.ops import check_graph
from support.cases import Results, assert_case_matches, oracle_results
from support.resize_cases import add_graph_input_case, add_resize_cases
from support.tflite_builder import ModelBuilder

QUANT: dict[str, Any] = {"scale": 0.05, "zero_point": 3}
SIZES = [((3, 4), (6, 8)), ((5, 7), (3, 2)), ((4, 4), (7, 5)), ((2, 3), (2, 3)),
         ((1, 1), (3, 2)), ((6, 5), (1, 9))]
MODES = [ResizeOptions(False, False), ResizeOptions(True, False), ResizeOptions(False, True)]
DTYPES = ("int8", "int16", "float32")


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("resize cases")
    rng = np.random.default_rng(5)

    def quant(dtype: str) -> dict[str, Any]:
        return QUANT if dtype == "int8" else ({"scale": 0.001, "zero_point": 0}
                                              if dtype == "int16" else {})

    def data(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        if dtype == "float32":
            return rng.standard_normal(shape).astype(np.float32)
        info = np.iinfo(np.dtype(dtype))
        return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)

    out_of = add_resize_cases(b, "RESIZE_NEAREST_NEIGHBOR", DTYPES, SIZES, MODES,
                              quant=quant, data=data)
    # the graph input: a resize of an activation (not a constant)
    x, y = add_graph_input_case(b, "RESIZE_NEAREST_NEIGHBOR", (5, 4), QUANT)
    out_of["graph-input"] = y
    return b.build([x], [y]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-9, 9, dtype=np.int8).reshape(1, 3, 3, 2)]


@pytest.fixture(scope="module")
def results() -> Results:
    return oracle_results(MODEL, INPUTS, OUT_OF)


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(OUT_OF))
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid])


def test_nearest_indices_follow_tflm_rules() -> None:
    # 3 -> 6 doubles; align_corners maps the corners onto each other
    assert nearest_indices(3, 6, False, False) == [0, 0, 1, 1, 2, 2]
    assert nearest_indices(3, 5, True, False) == [0, 1, 1, 2, 2]
    assert nearest_indices(4, 2, False, True) == [1, 3]
    assert nearest_indices(1, 3, False, True) == [0, 0, 0]


def test_refuses_a_size_operand_that_is_not_constant() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 2, 2, 1), "float32")
    s = b.tensor((2,), "int32")
    y = b.tensor((1, 4, 4, 1), "float32")
    b.op("RESIZE_NEAREST_NEIGHBOR", [x, s], [y], asdict(ResizeOptions()))
    with pytest.raises(UnsupportedError, match=r"op 0 \(RESIZE_NEAREST_NEIGHBOR\).*size"):
        check_graph(load_model_bytes(b.build([x, s], [y])))
