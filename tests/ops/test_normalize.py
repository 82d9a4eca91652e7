"""LOG_SOFTMAX and L2_NORMALIZATION (float32, zero rows, large logits; int8 LOG_SOFTMAX
over fine to coarse input scales, constant rows and every byte; int8 L2_NORMALIZATION
with zero rows and the largest sum of squares): bit-exact against TFLite Micro in one
multi-op model (one build, one oracle run; on the host and as Cortex-M7 firmware)."""

from __future__ import annotations

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


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("normalize cases")
    rng = np.random.default_rng(21)
    out_of: dict[str, int] = {}
    for opcode in ("LOG_SOFTMAX", "L2_NORMALIZATION"):
        for k, shape in enumerate([(1, 10), (3, 5, 7), (2, 1), (4,), (2, 2, 3, 9)]):
            data = (rng.standard_normal(shape) * 4).astype(np.float32)
            if k == 1:
                data[0, 0] = 0.0  # an all-zero row: L2's epsilon
                data[1, 2] = 80.0  # large logits: LOG_SOFTMAX's max shift
            x = b.tensor(shape, "float32", data=data)
            y = b.tensor(shape, "float32")
            b.op(opcode, [x], [y])
            out_of[f"{opcode.lower()}-{k}"] = y
    # int8 LOG_SOFTMAX (output scale 16/256, zero point 127): input scales from fine to
    # coarse (diff_min cuts rows), rows of one value, every byte in one row, long rows
    ls8 = [((1, 10), 0.1, -3), ((3, 5, 7), 0.02, 0), ((2, 1), 0.5, 10), ((4, 256), 0.05, 0),
           ((6, 33), 1.0, -128), ((2, 2, 40), 0.003, 5), ((5, 12), 0.25, 0)]
    for k, (shape, si, zi) in enumerate(ls8):
        data = rng.integers(-128, 128, shape).astype(np.int8)
        if k == 3:
            data = np.resize(np.arange(-128, 128, dtype=np.int8), shape)
        if k == 6:
            data[0, :] = 17  # a constant row
        x = b.tensor(shape, "int8", data=data, scale=si, zero_point=zi)
        y = b.tensor(shape, "int8", scale=16 / 256, zero_point=127)
        b.op("LOG_SOFTMAX", [x], [y])
        out_of[f"log_softmax-int8-{k}"] = y
    for k, (shape, zp) in enumerate([((3, 10), 0), ((2, 3, 5), -7), ((4, 1), 3), ((1, 64), 0)]):
        data = rng.integers(-128, 128, shape).astype(np.int8)
        if k == 0:
            data[0] = zp  # an all-zero row
            data[1] = 127  # the largest sum of squares
        x = b.tensor(shape, "int8", data=data, scale=0.05, zero_point=zp)
        y = b.tensor(shape, "int8", scale=1 / 128, zero_point=0)
        b.op("L2_NORMALIZATION", [x], [y])
        out_of[f"l2_normalization-int8-{k}"] = y
    # the graph input through both (activations, not constants)
    x = b.tensor((2, 6), "float32", name="x")
    y = b.tensor((2, 6), "float32")
    b.op("LOG_SOFTMAX", [x], [y])
    z = b.tensor((2, 6), "float32", name="z")
    b.op("L2_NORMALIZATION", [y], [z])
    out_of.update({"graph-log_softmax": y, "graph-l2_normalization": z})
    return b.build([x], [z]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.linspace(-6.5, 6.5, 12, dtype=np.float32).reshape(2, 6)]


results, test_bit_exact = case_model_tests(MODEL, INPUTS, OUT_OF, same_dtype=True)


def test_int8_log_softmax_refuses_an_output_quantisation_tflm_rejects() -> None:
    """TFLM's Prepare requires output scale 16/256 and zero point 127."""
    b = ModelBuilder()
    x = b.tensor((2, 5), "int8", scale=0.1, zero_point=0)
    y = b.tensor((2, 5), "int8", scale=0.1, zero_point=127)
    b.op("LOG_SOFTMAX", [x], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(LOG_SOFTMAX\).*scale 16/256"):
        check_graph(load_model_bytes(b.build([x], [y])))


@slow_on_qemu
def test_cases_on_cortex_m7() -> None:
    """Every case as Cortex-M7 firmware under QEMU, against TFLM on the host."""
    assert_cortex_m7_matches(MODEL, INPUTS, OUT_OF)
