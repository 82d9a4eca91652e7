"""RESIZE_BILINEAR: bit-exact against TFLite Micro (int8 through TFLM's fixed-point
ResizeBilinearInteger, float32 through its float formula; up- and down-sampling by
integer and fractional factors, odd sizes, batch 2, every option combination TFLM
accepts), in one multi-op model (one build, one oracle run); refusals of what TFLM's
kernel does not take."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import pytest

from nnopt.boards import load_board
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ResizeOptions
from nnopt.lowering.resize import bilinear_float, bilinear_q10
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from support.cases import (
    Results,
    assert_case_matches,
    differing_tensors,
    oracle_results,
    tflm_and_cortex_m7,
)
from support.markers import needs_qemu
from support.resize_cases import add_graph_input_case, add_resize_cases
from support.tflite_builder import ModelBuilder

QUANT: dict[str, Any] = {"scale": 0.05, "zero_point": -3}
SIZES = [((3, 4), (6, 8)), ((5, 7), (3, 2)), ((4, 4), (7, 5)), ((2, 3), (2, 3)),
         ((1, 1), (3, 2)), ((6, 5), (1, 9)), ((3, 3), (11, 13)), ((7, 9), (4, 5))]
MODES = [ResizeOptions(False, False), ResizeOptions(True, False), ResizeOptions(False, True)]
DTYPES = ("int8", "float32")


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("resize bilinear cases")
    rng = np.random.default_rng(7)

    def data(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
        if dtype == "float32":
            return (rng.standard_normal(shape) * 10).astype(np.float32)
        return rng.integers(-128, 128, size=shape).astype(np.int8)

    out_of = add_resize_cases(b, "RESIZE_BILINEAR", DTYPES, SIZES, MODES,
                              quant=lambda d: QUANT if d == "int8" else {}, data=data)
    # the graph input (an activation, not a constant), with values whose blends tie at
    # exactly .5 in TFLM's 1/2^20 units: rounding half away from zero is exercised
    x, y = add_graph_input_case(b, "RESIZE_BILINEAR", (6, 6), QUANT)
    out_of["graph-input"] = y
    return b.build([x], [y]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.array([-128, 127, -1, 0, 1, -2, 3, -5, 7, 11, -13, 100, -100, 33, -33, 64,
                    -64, 1], dtype=np.int8).reshape(1, 3, 3, 2)]


@pytest.fixture(scope="module")
def results() -> Results:
    return oracle_results(MODEL, INPUTS, OUT_OF)


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(OUT_OF))
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid], same_bits=True)


def test_fixed_point_tables_follow_tflm_rules() -> None:
    # 3 -> 6 with half-pixel centers: scale 512/1024; row 0 sits at -0.25 (clamped to
    # row 0 with a negative fraction), row 5 at 2.25 (both rows clamped to the last)
    pairs, fracs = bilinear_q10(3, 6, False, True)
    assert pairs[:4] == [0, 0, 0, 1]
    assert fracs[:2] == [-256, 256]
    assert pairs[-2:] == [2, 2]
    # align_corners maps the corners onto each other
    pairs, fracs = bilinear_q10(3, 5, True, False)
    assert pairs == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]
    assert fracs == [0, 512, 0, 512, 0]


def test_float_tables_are_float32_weights() -> None:
    pairs, weights = bilinear_float(2, 3, False, False)  # scale 2/3
    assert pairs == [0, 0, 0, 1, 1, 1]
    w = np.float32(np.float32(2) / np.float32(3))
    assert weights[2:4] == [float(np.float32(1) - w), float(w)]


def _one(dtype: str, options: ResizeOptions, out_quant: dict[str, Any] | None = None,
         const_size: bool = True) -> bytes:
    b = ModelBuilder()
    q: dict[str, Any] = QUANT if dtype != "float32" else {}
    x = b.tensor((1, 2, 2, 1), dtype, **q)
    s = b.const(np.asarray([4, 4], np.int32)) if const_size else b.tensor((2,), "int32")
    y = b.tensor((1, 4, 4, 1), dtype, **(out_quant if out_quant is not None else q))
    b.op("RESIZE_BILINEAR", [x, s], [y], asdict(options))
    return b.build([x] if const_size else [x, s], [y])


@pytest.mark.parametrize(("model", "match"), [
    (_one("int16", ResizeOptions()), r"op 0 \(RESIZE_BILINEAR\).*INT16.*int8 or float32"),
    (_one("float32", ResizeOptions(True, True)), r"align_corners and half_pixel_centers"),
    (_one("float32", ResizeOptions(), const_size=False), r"size operand"),
    (_one("int8", ResizeOptions(), {"scale": 0.1, "zero_point": 0}), r"quantised"),
])
def test_refuses_what_tflm_does_not_run(model: bytes, match: str) -> None:
    with pytest.raises(UnsupportedError, match=match):
        check_graph(load_model_bytes(model))


@pytest.mark.qemu
@pytest.mark.slow
@needs_qemu
def test_bit_exact_on_cortex_m7() -> None:
    """The same model as Cortex-M7 firmware (nucleo_f767zi) under QEMU: every case
    byte for byte equal to TFLM."""
    ref, got = tflm_and_cortex_m7(MODEL, INPUTS, board=load_board("nucleo_f767zi"))
    differ = differing_tensors(ref, got, OUT_OF, bytewise=True)
    assert differ == []


def test_planner_gives_the_resize_its_own_buffer_on_detect_b() -> None:
    """detect_b (RESIZE_BILINEAR feeding a channel CONCATENATION): the resize is neither
    element-wise nor a window, so its output neither aliases nor overlaps its input;
    the concatenation after it still runs row by row over its dying input."""
    from conftest import model_path
    from nnopt.planner import plan_model

    graph = load_model_bytes(model_path("families/detect_b.tflite").read_bytes())
    plan = plan_model(graph, PlanOptions(inplace_ops="auto", tiling="auto")).plan  # the CLI's
    resize = next(op for op in graph.ops if op.opcode == "RESIZE_BILINEAR")
    concat = next(op for op in graph.ops if resize.outputs[0] in op.inputs)
    x, y = plan.buffer_of(resize.inputs[0]), plan.buffer_of(resize.outputs[0])
    assert y.alias_of is None and (resize.outputs[0], resize.inputs[0]) not in plan.inplace
    assert x.offset + x.size <= y.offset or y.offset + y.size <= x.offset
    assert any(e.op == concat.index and e.kind == "rows" for e in plan.inplace_ops)
    assert plan.arena_bytes < 41_472  # TFLM's planned head for this model
