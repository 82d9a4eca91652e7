"""Stateful models (issue 17): variable tensors in a persistent region beside the arena,
SVDF (int8 with int16 or int8 activation state, float32), UNIDIRECTIONAL_SEQUENCE_LSTM
(int8 with an int16 cell state in the converter's layout, its 16x8 form, float32),
several invocations per run.

Every model runs 4 invocations in one process on both sides (the state carried over) and
is compared invocation by invocation with the tflite-micro interpreter; one traced run
compares every tensor of the last invocation, the state included. The SVDF cases are
in two multi-op models, the LSTM cases in one per type (one build each); TFLM's own keyword
benchmark models (7 SVDF ops, int16 and int8 state) and its trained MNIST LSTM, float32
and int8 (`models/SOURCES.md`) are the real-model cross-check.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nnopt.blob.writer import write_blob
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import NUMPY_DTYPE, LstmOptions, SvdfOptions
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions, plan_model
from nnopt.runner import run_planned
from nnopt.testing.harness import random_inputs, run_nnopt_invocations, run_tflm_invocations
from support.cbuild import c_source, kernel_sources
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder

REPO = Path(__file__).resolve().parents[2]
INVOCATIONS = 4
KEYWORD = [REPO / "models" / "keyword_scrambled.tflite",
           REPO / "models" / "keyword_scrambled_8bit.tflite"]
TRAINED_LSTM = REPO / "models" / "trained_lstm.tflite"
TRAINED_LSTM_INT8 = REPO / "models" / "trained_lstm_int8.tflite"


def _svdf(b: ModelBuilder, rng: np.random.Generator, x: int, batches: int, inputs: int,
          units: int, rank: int, memory: int, out_scale: float, state: str) -> int:
    """Append an int8 SVDF reading x; returns its output tensor. ``state``: "int16"
    (zero point 0, as TFLM's converter writes it) or "int8" (a non-zero zero point)."""
    filters = units * rank
    wf = b.const(rng.integers(-127, 128, (filters, inputs)).astype(np.int8), scale=0.01)
    if state == "int16":
        wt = b.const(rng.integers(-32767, 32768, (filters, memory)).astype(np.int16),
                     scale=3e-5)
        s_scale, s_zp = 0.002, 0
    else:
        wt = b.const(rng.integers(-127, 128, (filters, memory)).astype(np.int8), scale=0.01)
        s_scale, s_zp = 0.08, -7
    bias_scale = float(np.float32(s_scale) * np.float32(wt_scale(state)))
    bias = b.const(rng.integers(-3000, 3000, (units,)).astype(np.int32), scale=bias_scale)
    st = b.tensor((batches, memory * filters), state, scale=s_scale, zero_point=s_zp,
                  variable=True)
    y = b.tensor((batches, units), "int8", scale=out_scale, zero_point=2)
    b.op("SVDF", [x, wf, wt, bias, st], [y], SvdfOptions(rank, "NONE"))
    return y


def wt_scale(state: str) -> float:
    return 3e-5 if state == "int16" else 0.01


def _int8_model() -> tuple[bytes, int]:
    """Five int8 SVDF cases: ranks 1 to 3, memory 2 to 6, batch 1 and 2, int16 and int8
    state, and two SVDFs in a chain (each with its own state). Returns the model and the
    number of variable tensors."""
    rng = np.random.default_rng(17)
    b = ModelBuilder("svdf int8 cases")
    x = b.tensor((2, 8), "int8", name="x", scale=0.03, zero_point=-3)
    x1 = b.tensor((1, 5), "int8", name="x1", scale=0.02, zero_point=4)
    a = _svdf(b, rng, x, 2, 8, 4, 1, 4, 0.1, "int16")
    mid = _svdf(b, rng, x, 2, 8, 3, 2, 3, 0.2, "int16")
    chained = _svdf(b, rng, mid, 2, 3, 2, 1, 2, 0.1, "int16")
    c = _svdf(b, rng, x, 2, 8, 3, 1, 5, 0.1, "int8")
    e = _svdf(b, rng, x1, 1, 5, 2, 3, 6, 0.2, "int16")
    return b.build([x, x1], [a, chained, c, e]), 5


def _float_model() -> tuple[bytes, int]:
    """Four float32 SVDF cases: fused NONE / RELU / RELU6 / RELU_N1_TO_1, ranks 1 and 2,
    memory 2 to 5."""
    rng = np.random.default_rng(18)
    b = ModelBuilder("svdf float cases")
    x = b.tensor((2, 6), "float32", name="x")
    outs = []
    for k, (act, rank, memory) in enumerate(
            [("NONE", 1, 4), ("RELU", 2, 3), ("RELU6", 1, 5), ("RELU_N1_TO_1", 2, 2)]):
        units = 3 + k % 2
        filters = units * rank
        wf = b.const(rng.standard_normal((filters, 6)).astype(np.float32))
        wt = b.const(rng.standard_normal((filters, memory)).astype(np.float32))
        bias = b.const(rng.standard_normal(units).astype(np.float32))
        st = b.tensor((2, memory * filters), "float32", variable=True)
        y = b.tensor((2, units), "float32")
        b.op("SVDF", [x, wf, wt, bias, st], [y], SvdfOptions(rank, act))
        outs.append(y)
    return b.build([x], outs), 4


def _lstm(b: ModelBuilder, rng: np.random.Generator, x: int, shape: tuple[int, int, int],
          state: int, options: LstmOptions, dtype: str = "float32") -> int:
    """Append an LSTM over x ([batches, time, input], or time-major); returns its output."""
    batches = shape[1] if options.time_major else shape[0]
    n_in = shape[2]
    ws = [b.const(rng.standard_normal((state, n_in if k < 4 else state)).astype(np.float32)
                  * 0.5) for k in range(8)]
    bs = [b.const(rng.standard_normal(state).astype(np.float32)) for _ in range(4)]
    h = b.tensor((batches, state), dtype, variable=True)
    c = b.tensor((batches, state), dtype, variable=True)
    y = b.tensor((shape[0], shape[1], state), dtype)
    b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", [x, *ws, -1, -1, -1, *bs, -1, -1, h, c, -1, -1, -1,
                                          -1], [y], options)
    return y


def _lstm_s8(b: ModelBuilder, rng: np.random.Generator, x: int, x_scale: float,
             shape: tuple[int, int, int], state: int, options: LstmOptions,
             cell_scale: float, hidden_q: tuple[float, int], act: str = "int8") -> int:
    """Append an int8 LSTM with an int16 cell state over x in the layout TFLM's converter
    writes: 24 inputs (absent ones -1), int8 weights per tensor with zero point 0, int32
    biases on input scale x weight scale, an int8 hidden and an int16 cell state as
    variable tensors, and 5 empty intermediates (the 4 gates' and the effective hidden
    state's). ``act="int16"``: the 16x8 form (int16 input, hidden state and output,
    int64 biases). Returns the output."""
    batches = shape[1] if options.time_major else shape[0]
    n_in = shape[2]
    w_scales = [0.004 + 0.002 * k for k in range(8)]
    ws = [b.const(rng.integers(-127, 128, (state, n_in if k < 4 else state)).astype(np.int8),
                  scale=w_scales[k]) for k in range(8)]
    bs = []
    for k in range(4):
        bias_scale = float(np.float32(x_scale) * np.float32(w_scales[k]))
        bs.append(b.const(rng.integers(-int(0.8 / bias_scale), int(0.8 / bias_scale),
                                       state).astype(np.int64 if act == "int16" else np.int32),
                          scale=bias_scale))
    h = b.tensor((batches, state), act, scale=hidden_q[0], zero_point=hidden_q[1],
                 variable=True)
    c = b.tensor((batches, state), "int16", scale=cell_scale, variable=True)
    # as in TFLM's trained_lstm_int8.tflite: the gates' intermediates float32 and empty,
    # the effective hidden state's int8 on the hidden state's quantisation
    mids = [b.tensor((0,), "float32") for _ in range(4)]
    mids.append(b.tensor((0,), act, scale=hidden_q[0], zero_point=hidden_q[1]))
    y = b.tensor((shape[0], shape[1], state), act, scale=hidden_q[0],
                 zero_point=hidden_q[1])
    b.op("UNIDIRECTIONAL_SEQUENCE_LSTM", [x, *ws, -1, -1, -1, *bs, -1, -1, h, c, -1, -1, -1,
                                          -1], [y], options, intermediates=mids)
    return y


def _lstm_s8_model() -> tuple[bytes, int]:
    """Three int8 LSTM cases (int16 cell state): batch-major on a 2^-11 cell scale
    without clip, time-major with a cell clip, and a stacked one fed by the first on a
    2^-15 cell scale (the other rescale path of the cell state's tanh)."""
    rng = np.random.default_rng(20)
    b = ModelBuilder("lstm int8 cases")
    x = b.tensor((2, 3, 4), "int8", name="x", scale=0.05, zero_point=-3)
    xt = b.tensor((3, 2, 3), "int8", name="xt", scale=0.04, zero_point=5)
    y1 = _lstm_s8(b, rng, x, 0.05, (2, 3, 4), 5, LstmOptions("TANH", 0.0, 0.0, False),
                  2**-11, (0.008, 3))
    y2 = _lstm_s8(b, rng, xt, 0.04, (3, 2, 3), 4, LstmOptions("TANH", 1.5, 0.0, True),
                  2**-11, (0.0075, -4))
    y3 = _lstm_s8(b, rng, y1, 0.008, (2, 3, 5), 3, LstmOptions("TANH", 0.0, 0.0, False),
                  2**-15, (0.007, 0))
    return b.build([x, xt], [y1, y2, y3]), 6


def _lstm_s8_deep_model() -> tuple[bytes, int]:
    """Two int8 LSTM cases whose gate FCs leave the three-row loops a tail: input depth
    30 (seven chunks of four and two) with 9 units, and depth 300, above the depth that
    cores without DSP offset into int16 on the stack (256; above it their gate FCs add
    the offset per call), with 7 units (two groups of three and one)."""
    rng = np.random.default_rng(22)
    b = ModelBuilder("lstm int8 deep rows")
    x = b.tensor((2, 3, 30), "int8", name="x", scale=0.05, zero_point=-3)
    xd = b.tensor((1, 2, 300), "int8", name="xd", scale=0.03, zero_point=9)
    y1 = _lstm_s8(b, rng, x, 0.05, (2, 3, 30), 9, LstmOptions("TANH", 0.0, 0.0, False),
                  2**-11, (0.008, 3))
    y2 = _lstm_s8(b, rng, xd, 0.03, (1, 2, 300), 7, LstmOptions("TANH", 0.0, 0.0, False),
                  2**-11, (0.0075, -4))
    return b.build([x, xd], [y1, y2]), 4


# the 16x8 model's clipped LSTM: its cell clip, quantised on its 2^-11 cell scale
S16_CLIP, S16_CLIP_Q = 0.25, 512


def _lstm_s16_model() -> tuple[bytes, int]:
    """Three 16x8 LSTM cases (int16 activations, int64 biases, int16 cell state):
    batch-major on a 2^-11 cell scale without clip, with non-zero input and hidden zero
    points (TFLM's arithmetic takes them; the converter writes 0, as in the other two),
    time-major with a cell clip that clips (0.25, below the cell's range), and a stacked
    one fed by the first on a 2^-15 cell scale."""
    rng = np.random.default_rng(21)
    b = ModelBuilder("lstm 16x8 cases")
    x = b.tensor((2, 3, 4), "int16", name="x", scale=2**-12, zero_point=7)
    xt = b.tensor((3, 2, 3), "int16", name="xt", scale=3e-4)
    y1 = _lstm_s8(b, rng, x, 2**-12, (2, 3, 4), 5, LstmOptions("TANH", 0.0, 0.0, False),
                  2**-11, (2**-15, -5), act="int16")
    y2 = _lstm_s8(b, rng, xt, 3e-4, (3, 2, 3), 4,
                  LstmOptions("TANH", S16_CLIP, 0.0, True), 2**-11, (3.1e-5, 0),
                  act="int16")
    y3 = _lstm_s8(b, rng, y1, 2**-15, (2, 3, 5), 3, LstmOptions("TANH", 0.0, 0.0, False),
                  2**-15, (2**-15, 0), act="int16")
    return b.build([x, xt], [y1, y2, y3]), 6


def _lstm_model() -> tuple[bytes, int]:
    """Three float32 LSTM cases: batch-major without clip, time-major with a cell clip,
    and one fed by the first (a stacked LSTM)."""
    rng = np.random.default_rng(19)
    b = ModelBuilder("lstm float cases")
    x = b.tensor((2, 3, 4), "float32", name="x")
    xt = b.tensor((3, 2, 3), "float32", name="xt")
    y1 = _lstm(b, rng, x, (2, 3, 4), 5, LstmOptions("TANH", 0.0, 0.0, False))
    y2 = _lstm(b, rng, xt, (3, 2, 3), 4, LstmOptions("TANH", 0.8, 0.0, True))
    y3 = _lstm(b, rng, y1, (2, 3, 5), 3, LstmOptions("TANH", 3.0, 0.0, False))
    return b.build([x, xt], [y2, y3]), 6


INT8_MODEL, INT8_STATES = _int8_model()
LSTM_MODEL, LSTM_STATES = _lstm_model()
LSTM_S8_MODEL, LSTM_S8_STATES = _lstm_s8_model()
LSTM_S16_MODEL, LSTM_S16_STATES = _lstm_s16_model()
LSTM_S8_DEEP_MODEL, LSTM_S8_DEEP_STATES = _lstm_s8_deep_model()
FLOAT_MODEL, FLOAT_STATES = _float_model()


def _steps(model: bytes) -> list[list[np.ndarray]]:
    return [random_inputs(model, seed=s) for s in range(INVOCATIONS)]


def _assert_invocations_equal(model: bytes, target: str = "host", **kw: Any) -> None:
    steps = _steps(model)
    ref = run_tflm_invocations(model, steps)
    got = run_nnopt_invocations(model, steps, target=target, **kw)
    assert len(got) == INVOCATIONS
    for k, (r, g) in enumerate(zip(ref, got, strict=True)):
        for i, (a, b) in enumerate(zip(r, g, strict=True)):
            np.testing.assert_array_equal(b, a, err_msg=f"invocation {k}, output {i}")
    # the state matters: with the same weights, later invocations give other outputs
    # than a fresh model on the same input would (checked on output 0)
    fresh = run_tflm_invocations(model, steps[-1:])
    assert any(not np.array_equal(fresh[0][i], ref[-1][i]) for i in range(len(ref[-1])))


def _assert_last_trace_equal(model: bytes, target: str = "host") -> int:
    """Every tensor nnopt traces (op outputs and the state each op updated) after the
    last of 4 invocations equals TFLM's; returns how many were compared."""
    from tflite_micro.python.tflite_micro import runtime

    g = load_model_bytes(model)
    steps = _steps(model)
    interp = runtime.Interpreter.from_bytes(
        model, arena_size=1 << 20,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    for inputs in steps:
        for i, x in enumerate(inputs):
            interp.set_input(x, i)
        interp.invoke()
    pm = plan_model(g, PlanOptions(), source_bytes=model)
    data = [b"".join(s[i].tobytes() for s in steps) for i in range(len(g.inputs))]
    res = run_planned(pm, data, target=target, trace=True)  # type: ignore[arg-type]
    assert set(g.state) <= set(res.trace)
    for t, raw in res.trace.items():
        got: Any = interp.GetTensor(t, 0)
        ref = np.array(got["tensor_data"] if isinstance(got, dict) else got).reshape(-1)
        np.testing.assert_array_equal(
            np.frombuffer(raw, dtype=NUMPY_DTYPE[g.tensors[t].dtype]), ref,
            err_msg=f"tensor {t} ({g.tensors[t].name})")
    return len(res.trace)


# ----- bit-exact over several invocations -----

def test_int8_svdf_bit_exact_over_invocations() -> None:
    _assert_invocations_equal(INT8_MODEL)


def test_float_svdf_bit_exact_over_invocations() -> None:
    _assert_invocations_equal(FLOAT_MODEL)


def test_float_lstm_bit_exact_over_invocations() -> None:
    _assert_invocations_equal(LSTM_MODEL)


def test_int8_lstm_bit_exact_over_invocations() -> None:
    _assert_invocations_equal(LSTM_S8_MODEL)


def test_int8_lstm_deep_rows_bit_exact_over_invocations() -> None:
    _assert_invocations_equal(LSTM_S8_DEEP_MODEL)
    assert _assert_last_trace_equal(LSTM_S8_DEEP_MODEL) == 2 + LSTM_S8_DEEP_STATES


def test_16x8_lstm_bit_exact_over_invocations() -> None:
    _assert_invocations_equal(LSTM_S16_MODEL)


def test_16x8_lstm_cell_clip_clips() -> None:
    """The time-major 16x8 case's clip binds: after 4 invocations TFLM's cell state
    holds values at the quantised clip (and nnopt's equals it: the trace test)."""
    from tflite_micro.python.tflite_micro import runtime

    g = load_model_bytes(LSTM_S16_MODEL)
    clipped = next(op for op in g.ops if op.options.cell_clip > 0)
    interp = runtime.Interpreter.from_bytes(
        LSTM_S16_MODEL, arena_size=1 << 20,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    for inputs in _steps(LSTM_S16_MODEL):
        for i, x in enumerate(inputs):
            interp.set_input(x, i)
        interp.invoke()
    got: Any = interp.GetTensor(clipped.inputs[19], 0)
    cell = np.array(got["tensor_data"] if isinstance(got, dict) else got).reshape(-1)
    assert g.tensors[clipped.inputs[19]].quant.scale[0] == 2**-11
    assert np.abs(cell).max() == S16_CLIP_Q == round(S16_CLIP / 2**-11)


def test_every_tensor_and_the_state_after_four_invocations() -> None:
    assert _assert_last_trace_equal(INT8_MODEL) == 5 + INT8_STATES
    assert _assert_last_trace_equal(FLOAT_MODEL) == 4 + FLOAT_STATES
    assert _assert_last_trace_equal(LSTM_MODEL) == 3 + LSTM_STATES
    assert _assert_last_trace_equal(LSTM_S8_MODEL) == 3 + LSTM_S8_STATES
    assert _assert_last_trace_equal(LSTM_S16_MODEL) == 3 + LSTM_S16_STATES


def test_tflm_trained_lstm_bit_exact() -> None:
    """TFLM's MNIST LSTM (28 steps, cell clip 10, then RESHAPE, FULLY_CONNECTED,
    SOFTMAX): every tensor and both states after 4 invocations, each one's output."""
    model = TRAINED_LSTM.read_bytes()
    assert _assert_last_trace_equal(model) == 4 + 2  # 4 ops and 2 states
    _assert_invocations_equal(model)


def test_tflm_trained_int8_lstm_bit_exact() -> None:
    """The same MNIST LSTM as TFLM's converter quantises it (int8, int16 cell state on
    2^-12, cell clip 10 saturating the quantised clip, 5 intermediates, then RESHAPE,
    FULLY_CONNECTED, SOFTMAX): every tensor and both states after 4 invocations, each
    one's output."""
    model = TRAINED_LSTM_INT8.read_bytes()
    assert _assert_last_trace_equal(model) == 4 + 2
    _assert_invocations_equal(model)


@pytest.mark.parametrize("path", KEYWORD, ids=lambda p: p.stem)
def test_tflm_keyword_models_bit_exact(path: Path) -> None:
    """TFLM's keyword benchmark (QUANTIZE, 7 SVDF, FULLY_CONNECTED, SOFTMAX): every
    tensor and all 7 states after 4 invocations, and the outputs of each."""
    model = path.read_bytes()
    assert _assert_last_trace_equal(model) == 15 + 7
    steps = _steps(model)
    ref = run_tflm_invocations(model, steps)
    got = run_nnopt_invocations(model, steps)
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_array_equal(g[0], r[0])


def test_dynamic_allocator_keeps_the_state() -> None:
    _assert_invocations_equal(INT8_MODEL, allocator="dynamic")
    _assert_invocations_equal(LSTM_S8_MODEL, allocator="dynamic")
    _assert_invocations_equal(LSTM_S16_MODEL, allocator="dynamic")


@pytest.mark.qemu
@needs_qemu
def test_stateful_on_cortex_m7() -> None:
    _assert_invocations_equal(INT8_MODEL, target="qemu-m7")
    _assert_invocations_equal(FLOAT_MODEL, target="qemu-m7")
    _assert_invocations_equal(LSTM_MODEL, target="qemu-m7")
    _assert_invocations_equal(LSTM_S8_MODEL, target="qemu-m7")
    assert _assert_last_trace_equal(LSTM_S8_MODEL, target="qemu-m7") == 3 + LSTM_S8_STATES
    _assert_invocations_equal(LSTM_S16_MODEL, target="qemu-m7")
    assert _assert_last_trace_equal(LSTM_S16_MODEL, target="qemu-m7") == 3 + LSTM_S16_STATES
    # the int8 LSTM's gate FCs with DSP: one- and three-unit tails, depths 30 and 300
    assert _assert_last_trace_equal(LSTM_S8_DEEP_MODEL, target="qemu-m7") \
        == 2 + LSTM_S8_DEEP_STATES
    _assert_invocations_equal(TRAINED_LSTM_INT8.read_bytes(), target="qemu-m7")
    assert _assert_last_trace_equal(TRAINED_LSTM.read_bytes(), target="qemu-m7") == 6
    assert _assert_last_trace_equal(KEYWORD[1].read_bytes(), target="qemu-m7") == 22


@pytest.mark.qemu
@pytest.mark.slow
@needs_qemu
def test_stateful_on_cortex_m3() -> None:
    _assert_invocations_equal(INT8_MODEL, target="qemu-m3")
    # the int8 LSTM's gate FCs without DSP: the row offset once into int16 (Thumb-2
    # assembly), and above 256 inputs the calls that add it
    _assert_invocations_equal(LSTM_S8_MODEL, target="qemu-m3")
    assert _assert_last_trace_equal(LSTM_S8_DEEP_MODEL, target="qemu-m3") \
        == 2 + LSTM_S8_DEEP_STATES
    _assert_invocations_equal(TRAINED_LSTM_INT8.read_bytes(), target="qemu-m3")
    assert _assert_last_trace_equal(KEYWORD[0].read_bytes(), target="qemu-m3") == 22


# ----- the plan: state beside the arena -----

def test_state_lives_outside_the_arena() -> None:
    g = load_model_bytes(KEYWORD[0].read_bytes())
    plan = plan_model(g, PlanOptions()).plan
    state = {e.tensor for e in plan.state}
    assert state == set(g.state) and len(state) == 7
    assert not state & {b.tensor for b in plan.buffers}
    assert plan.state_bytes == sum(g.tensors[t].nbytes for t in state) == 7 * 1024 + 3 * 1024
    # slots are disjoint and aligned
    spans = sorted((e.offset, e.offset + e.size) for e in plan.state)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    assert all(e.offset % plan.alignment == 0 for e in plan.state)
    # the arena holds only the activations (and scratch): far below the state
    assert plan.arena_bytes < plan.state_bytes
    d = plan.to_json()
    assert d["state_bytes"] == plan.state_bytes
    assert d["sram_bytes"] == plan.arena_bytes + plan.state_bytes


def test_reset_values_follow_tflm() -> None:
    """int8 state starts at its zero point, int16 and float at 0 (ResetVariableTensors)."""
    g = load_model_bytes(KEYWORD[1].read_bytes())
    plan = plan_model(g, PlanOptions()).plan
    zps = {t: g.tensors[t].quant.zero_point[0] & 0xFF for t in g.state
           if g.tensors[t].quant is not None}
    assert {e.tensor: e.init for e in plan.state} == zps
    assert any(e.init for e in plan.state)
    plan16 = plan_model(load_model_bytes(KEYWORD[0].read_bytes()), PlanOptions()).plan
    assert all(e.init == 0 for e in plan16.state)


def test_stateless_plan_json_has_no_state_fields() -> None:
    g = load_model_bytes((REPO / "models" / "hello_world_int8.tflite").read_bytes())
    d = plan_model(g, PlanOptions()).plan.to_json()
    assert "state" not in d and "state_bytes" not in d


def test_generated_c_has_a_reset_and_a_separate_state_region(tmp_path: Path) -> None:
    from nnopt.codegen.c_model import generate

    g = load_model_bytes(INT8_MODEL, name="svdf8")
    pm = plan_model(g, PlanOptions())
    src = generate(pm, tmp_path)
    c, h = src.c_file.read_text(), src.h_file.read_text()
    assert f"static uint8_t svdf8_state[{pm.plan.state_bytes}];" in c
    assert "nnrt_status_t svdf8_reset(void);" in h
    assert f"SVDF8_STATE_BYTES {pm.plan.state_bytes}u" in h
    assert "svdf8_reset," in c  # the descriptor's reset


def test_reset_restores_the_first_invocation(cbuild: Any, tmp_path: Path) -> None:
    """tests/c/svdf_reset.c: invoke three times, reset, invoke: the first output again;
    without the reset the third differs (the state was carried)."""
    from nnopt.codegen.c_model import generate

    g = load_model_bytes(INT8_MODEL, name="svdf8")
    gen = generate(plan_model(g, PlanOptions()), tmp_path / "gen")
    main = tmp_path / "gen" / "svdf_reset.c"  # beside the model's header
    shutil.copyfile(c_source("svdf_reset.c"), main)
    exe = cbuild.program("svdf_reset", [main, gen.c_file,
                                        *kernel_sources("sequence", pattern="nnrt_svdf.c"),
                                        *kernel_sources("internal", pattern="nnrt_dot_s8.c"),
                                        *kernel_sources("internal", pattern="nnrt_rq_s8.c")])
    out = cbuild.run(exe)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["reset-equal", "carried-differs"]


# ----- what cannot run, refused by name -----

def test_blob_refuses_a_stateful_model() -> None:
    g = load_model_bytes(INT8_MODEL, name="svdf8")
    with pytest.raises(UnsupportedError,
                       match=r"model svdf8 is stateful .*in 5 variable tensor.*blob"):
        write_blob(plan_model(g, PlanOptions()))


def _single_svdf(state_variable: bool, bias: bool) -> bytes:
    b = ModelBuilder()
    x = b.tensor((1, 4), "int8", scale=0.03)
    wf = b.const(np.ones((2, 4), np.int8), scale=0.01)
    wt = b.const(np.ones((2, 3), np.int16), scale=3e-5)
    bb = b.const(np.zeros(2, np.int32), scale=float(np.float32(0.002) * np.float32(3e-5))) \
        if bias else -1
    st = b.tensor((1, 6), "int16", scale=0.002, variable=state_variable)
    y = b.tensor((1, 2), "int8", scale=0.1)
    b.op("SVDF", [x, wf, wt, bb, st], [y], SvdfOptions(1, "NONE"))
    inputs = [x] if state_variable else [x, st]
    return b.build(inputs, [y])


def _single_lstm_s8(act: str = "int8", peephole: bool = False,
                    weight_zero_point: int = 0, x_scale: float = 0.05,
                    bias_dtype: str | None = None) -> bytes:
    """One small int8 (or ``act="int16"``: 16x8) LSTM, turned into a variant nnopt
    refuses (peephole weights, a weight zero point, a 16x8 gate rescale above TFLM's
    64-bit range, a 16x8 LSTM with int32 biases)."""
    bias_dtype = bias_dtype or ("int64" if act == "int16" else "int32")
    b2 = ModelBuilder()
    x2 = b2.tensor((1, 2, 3), act, scale=x_scale)
    ws = [b2.const(np.ones((2, 3 if k < 4 else 2), np.int8), scale=0.01,
                   zero_point=weight_zero_point if k == 0 else 0) for k in range(8)]
    peep = [b2.const(np.ones(2, np.int16), scale=0.01) for _ in range(3)] if peephole \
        else [-1, -1, -1]
    bs = [b2.const(np.zeros(2, np.dtype(bias_dtype)), scale=0.0005) for _ in range(4)]
    h = b2.tensor((1, 2), act, scale=0.008, variable=True)
    c = b2.tensor((1, 2), "int16", scale=2**-11, variable=True)
    y2 = b2.tensor((1, 2, 2), act, scale=0.008)
    b2.op("UNIDIRECTIONAL_SEQUENCE_LSTM", [x2, *ws, *peep, *bs, -1, -1, h, c, -1, -1, -1,
                                           -1], [y2], LstmOptions("TANH", 0.0, 0.0, False))
    return b2.build([x2], [y2])


@pytest.mark.parametrize("kw,match", [
    ({"peephole": True}, "peephole, projection or layer-norm"),
    ({"weight_zero_point": 3}, "zero point 3"),
    ({"act": "int16", "x_scale": 4.0}, r"16x8 gate 0 input rescale needs a shift of 8 "
                                       r"\(TFLM's 64-bit requantisation takes at most 7\)"),
    ({"act": "int16", "bias_dtype": "int32"}, r"bias tensor \d+ \(\w+, INT32"),
])
def test_refuses_lstm_variants_by_name(kw: dict[str, Any], match: str) -> None:
    check_graph(load_model_bytes(_single_lstm_s8()))  # the plain ones are supported
    check_graph(load_model_bytes(_single_lstm_s8(act="int16")))
    g = load_model_bytes(_single_lstm_s8(**kw))
    with pytest.raises(UnsupportedError,
                       match=r"op 0 \(UNIDIRECTIONAL_SEQUENCE_LSTM\).*" + match):
        check_graph(g)


def test_refuses_a_state_that_is_not_variable() -> None:
    with pytest.raises(UnsupportedError, match=r"op 0 \(SVDF\).*not a variable tensor"):
        check_graph(load_model_bytes(_single_svdf(False, True)))


def test_refuses_svdf_without_bias() -> None:
    with pytest.raises(UnsupportedError, match=r"op 0 \(SVDF\).*without a bias"):
        check_graph(load_model_bytes(_single_svdf(True, False)))


# ----- nnopt run: k inputs in one file, k outputs back to back -----

def test_cli_run_carries_state_over_invocations(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from nnopt.cli import main

    data = KEYWORD[1].read_bytes()
    steps = _steps(data)
    ref = run_tflm_invocations(data, steps)
    inp, out, stats = tmp_path / "in.bin", tmp_path / "out.bin", tmp_path / "stats.json"
    inp.write_bytes(b"".join(s[0].tobytes() for s in steps))
    assert main(["run", str(KEYWORD[1]), "--input", str(inp), "--output", str(out),
                 "--stats", str(stats)]) == 0
    assert out.read_bytes() == b"".join(x[0].tobytes() for x in ref)
    st = json.loads(stats.read_text())
    assert st["invocations"] == INVOCATIONS and st["state_bytes"] == 5 * 1024
    capsys.readouterr()
    # a file that is not whole tensors is refused, naming the input
    inp.write_bytes(inp.read_bytes()[:-1])
    assert main(["run", str(KEYWORD[1]), "--input", str(inp)]) == 1
    err = capsys.readouterr().err
    assert "input 0" in err and "one whole tensor per invocation" in err
    assert "Traceback" not in err
