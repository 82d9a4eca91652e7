"""int16 LOGISTIC and TANH (TFLM's 16x8 quantisation; the int8 LSTM's gates use the same
kernels) and the sigmoid table they interpolate in.

- The table is generated from its definition (:mod:`nnopt.sigmoid_table`): the
  committed C file is the generator's output, and the table has the property it is
  built for (linear interpolation between entries stays closer to the sigmoid than
  with plainly rounded samples).
- One model runs every int16 input (all 65536) through LOGISTIC and TANH at seven input
  scales: the power-of-two scales TFLM maps without a multiplier (2^-12 for both, 2^-11
  for TANH) and general scales (a 15-bit multiplier and a shift), compared exactly with
  the tflite-micro interpreter.
"""

from __future__ import annotations

import ctypes
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.lowering.activation import sigmoid_s16_params
from nnopt.ops import check_graph
from nnopt.sigmoid_table import STEP, render_c, sigmoid_table_u16
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cbuild import kernel_sources
from support.tflite_builder import ModelBuilder

REPO = Path(__file__).resolve().parents[2]
TABLE_C = REPO / "modules/nnrt/kernels/activation/nnrt_sigmoid_table_u16.c"
# power-of-two scales (2^-12: both ops' power-of-two path; 2^-11: TANH's, LOGISTIC's
# general path; 2^-13, 2^-15: general) and three general ones
SCALES = [2**-12, 2**-11, 2**-13, 2**-15, 1e-3, 3.1e-4, 0.0021]
ALL_INT16 = np.arange(-32768, 32768, dtype=np.int16).reshape(1, -1)


def test_committed_table_is_the_generators_output() -> None:
    assert TABLE_C.read_text(encoding="utf-8") == render_c()


def _interpolation_error(table: np.ndarray) -> float:
    x = np.linspace(0.0, 254.0, 254 * 64 + 1)
    i = np.minimum(x.astype(np.int64), 254)
    value = table[i] + (table[i + 1] - table[i]) * (x - i)
    return float(np.abs(value - 65536.0 / (1.0 + np.exp(-x * STEP))).max())


def test_table_interpolates_closer_than_rounded_samples() -> None:
    table = np.array(sigmoid_table_u16(), dtype=np.float64)
    rounded = np.array([round(65536.0 / (1.0 + math.exp(-i * STEP))) for i in range(256)],
                       dtype=np.float64)
    assert table[0] == 32768 and table[255] == 65535 and np.all(np.diff(table) >= 0)
    assert _interpolation_error(table) < 1.2 < _interpolation_error(rounded)
    assert 0 < np.count_nonzero(table != rounded) < 64  # a correction, not another curve


def _model() -> tuple[bytes, list[str]]:
    b = ModelBuilder("int16 logistic tanh")
    xs = [b.tensor((1, 65536), "int16", name=f"x{k}", scale=s) for k, s in enumerate(SCALES)]
    outs, ids = [], []
    for opcode in ("LOGISTIC", "TANH"):
        for x, s in zip(xs, SCALES, strict=True):
            y = b.tensor((1, 65536), "int16", scale=2**-15)
            b.op(opcode, [x], [y])
            outs.append(y)
            ids.append(f"{opcode} {s:g}")
    return b.build(xs, outs), ids


def test_every_int16_input_bit_exact_with_tflm() -> None:
    model, ids = _model()
    inputs = [ALL_INT16] * len(SCALES)
    ref, _ = run_tflm(model, inputs)
    got, _ = run_nnopt(model, inputs)
    bad = [cid for cid, r, g in zip(ids, ref, got, strict=True)
           if not np.array_equal(g.reshape(-1), r.reshape(-1))]
    assert not bad, f"differ from TFLM: {bad}"
    # the cases reach both ends of the output range (saturation and the mirror)
    assert ref[len(SCALES)].min() == -32767 and ref[len(SCALES)].max() == 32767


def test_power_of_two_and_general_paths() -> None:
    g = load_model_bytes(_model()[0])
    op = g.ops[0]
    x = {s: g.tensors[g.inputs[k]] for k, s in enumerate(SCALES)}
    y = g.tensors[op.outputs[0]]
    assert sigmoid_s16_params(op, x[2**-12], y) == {"input_multiplier": 3,
                                                    "input_left_shift": 0}
    tanh = g.ops[len(SCALES)]
    assert sigmoid_s16_params(tanh, x[2**-11], y) == {"input_multiplier": 6,
                                                      "input_left_shift": 0}
    general = sigmoid_s16_params(op, x[2**-11], y)
    assert general["input_left_shift"] > 0 and 16384 <= general["input_multiplier"] <= 32767


@pytest.mark.parametrize("zero_point,out_scale,match", [
    (5, 2**-15, "zero point 5"),
    (0, 2**-14, "not 2\\^-15"),
])
def test_refusals(zero_point: int, out_scale: float, match: str) -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4), "int16", scale=2**-12, zero_point=zero_point)
    y = b.tensor((1, 4), "int16", scale=out_scale)
    b.op("LOGISTIC", [x], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(LOGISTIC\).*" + match):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_kernels_in_place_and_argument_checks(cbuild: Any) -> None:
    """The C kernels on every input, in place (output == input) as the planner may run
    them, equal TFLM's outputs; bad arguments are refused."""
    model, _ = _model()
    ref, _ = run_tflm(model, [ALL_INT16] * len(SCALES))
    lib = cbuild.library("s16", kernel_sources("activation"))

    class Params(ctypes.Structure):
        _fields_ = [("input_multiplier", ctypes.c_int32),
                    ("input_left_shift", ctypes.c_int32)]

    g = load_model_bytes(model)
    for k, op in enumerate(g.ops):
        x, y = g.tensors[op.inputs[0]], g.tensors[op.outputs[0]]
        p = Params(**sigmoid_s16_params(op, x, y))
        buf = ALL_INT16.copy()
        fn = lib.nnrt_logistic_s16 if op.opcode == "LOGISTIC" else lib.nnrt_tanh_s16
        assert fn(ctypes.byref(p), _ptr(buf), _ptr(buf), buf.size) == 0
        np.testing.assert_array_equal(buf.reshape(-1), ref[k].reshape(-1), err_msg=op.opcode)
    good, out = Params(3, 0), np.zeros(4, np.int16)
    for fn in (lib.nnrt_logistic_s16, lib.nnrt_tanh_s16):
        assert fn(None, _ptr(out), _ptr(out), 4) != 0
        assert fn(ctypes.byref(good), None, _ptr(out), 4) != 0
        assert fn(ctypes.byref(good), _ptr(out), _ptr(out), -1) != 0
        assert fn(ctypes.byref(Params(0, 0)), _ptr(out), _ptr(out), 4) != 0
        assert fn(ctypes.byref(Params(3, 32)), _ptr(out), _ptr(out), 4) != 0


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


# ----- int16 RELU6 and LEAKY_RELU (issue 44: TFLM's activations.cc / leaky_relu.cc) -----

def _relu6_leaky_model() -> bytes:
    """Every int16 input through RELU6 (zero point 0 and not; a scale where 6.0 is
    beyond the int16 range) and LEAKY_RELU (positive, negative and above-one alphas,
    requantising to another scale and zero point)."""
    b = ModelBuilder("relu6_leaky_s16")
    shape = ALL_INT16.shape
    x = b.tensor(shape, "int16", name="x", scale=2**-12, zero_point=0)
    outs = []
    for k, (scale, zp) in enumerate(((2**-12, 0), (1e-3, 17), (1e-5, -40))):
        xi = x if k == 0 else b.tensor(shape, "int16", name=f"x{k}", scale=scale,
                                       zero_point=zp)
        if k:
            b.op("QUANTIZE", [x], [xi])
        y = b.tensor(shape, "int16", name=f"relu6_{k}", scale=scale, zero_point=zp)
        b.op("RELU6", [xi], [y])
        outs.append(y)
    for k, (alpha, scale, zp) in enumerate(((0.2, 2**-12, 0), (-0.7, 3e-4, 5),
                                            (1.9, 2.1e-4, -3))):
        y = b.tensor(shape, "int16", name=f"leaky_{k}", scale=scale, zero_point=zp)
        b.op("LEAKY_RELU", [x], [y], {"alpha": alpha})
        outs.append(y)
    return b.build([x], outs)


def test_int16_relu6_and_leaky_relu_bit_exact_with_tflm() -> None:
    model = _relu6_leaky_model()
    ref, _ = run_tflm(model, [ALL_INT16])
    got, _ = run_nnopt(model, [ALL_INT16])
    assert len(got) == len(ref) == 6
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        np.testing.assert_array_equal(g, np.asarray(r).reshape(g.shape), err_msg=str(k))
    assert got[0].min() == 0 and got[0].max() == 6 * 2**12


def test_int16_relu_refused_as_tflm_refuses_it() -> None:
    b = ModelBuilder("relu_s16")
    x = b.tensor((4,), "int16", name="x", scale=1e-3, zero_point=0)
    y = b.tensor((4,), "int16", name="y", scale=1e-3, zero_point=0)
    b.op("RELU", [x], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(RELU\).*TFLM's RELU takes no int16"):
        check_graph(load_model_bytes(b.build([x], [y])))
