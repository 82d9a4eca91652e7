"""SOFTMAX (int8 -> int8, int8 -> int16, int16 -> int16, float32) against the
tflite-micro interpreter.

The C kernels are called directly (ctypes on a host build) with the parameters the
lowering computes, out of place and in place, on rows of many lengths: random rows,
saturated rows (one clear maximum), flat rows, rows at the int8 extremes; for several
input scales and betas, including beta * scale >= 16 where TFLM's multiplier has shift
31. int16 -> int16 (TFLM's table-based SoftmaxInt16): the kernel on rows over the whole
int16 range, every input scale class from 2^-33 to 5 times the table's step, the tables
against their generator. Then one model with every variant runs through the whole
pipeline.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Sequence

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import SoftmaxOptions
from nnopt.lowering.softmax import softmax_params, softmax_s16_params
from nnopt.ops import check_graph
from nnopt.paths import nnrt_dir
from nnopt.softmax_table import ENTRIES, render_c, softmax_tables
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cbuild import kernel_library, ptr
from support.tflite_builder import ModelBuilder

# nnopt.lowering imports its family modules only while its registry is empty: importing
# one family module directly (above) would leave every other operator unregistered for
# the rest of the session. Register them all.

OUT_Q = {"int8": (1 / 256, -128), "int16": (1 / 65536, -32768)}


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    return kernel_library(tmp_path_factory, "softmax", "softmax")


class Params(ctypes.Structure):
    _fields_ = [("input_multiplier", ctypes.c_int32), ("input_left_shift", ctypes.c_int32),
                ("diff_min", ctypes.c_int32)]


class Params16(ctypes.Structure):
    _fields_ = [("input_multiplier", ctypes.c_int32), ("input_left_shift", ctypes.c_int32)]


def rows_int8(rng: np.random.Generator, rows: int, depth: int) -> np.ndarray:
    """Rows of different kinds: uniform random, one dominant value, flat, extremes,
    narrow random."""
    out = np.empty((rows, depth), dtype=np.int8)
    for r in range(rows):
        kind = r % 5
        if kind == 0:
            out[r] = rng.integers(-128, 128, depth)
        elif kind == 1:
            out[r] = -128
            out[r, rng.integers(depth)] = 127
        elif kind == 2:
            out[r] = rng.integers(-128, 128)
        elif kind == 3:
            out[r] = rng.choice(np.array([-128, 127], dtype=np.int8), depth)
        else:
            base = int(rng.integers(-100, 90))
            out[r] = np.clip(base + rng.integers(-6, 7, depth), -128, 127)
    return out


def rows_int16(rng: np.random.Generator, rows: int, depth: int) -> np.ndarray:
    """int16 rows: full-range random, one dominant value, flat, the extremes, narrow
    random, small differences near the top."""
    out = np.empty((rows, depth), dtype=np.int16)
    for r in range(rows):
        kind = r % 6
        if kind == 0:
            out[r] = rng.integers(-32768, 32768, depth)
        elif kind == 1:
            out[r] = -32768
            out[r, rng.integers(depth)] = 32767
        elif kind == 2:
            out[r] = rng.integers(-32768, 32768)
        elif kind == 3:
            out[r] = rng.choice(np.array([-32768, 32767], dtype=np.int16), depth)
        elif kind == 4:
            base = int(rng.integers(-30000, 30000))
            out[r] = np.clip(base + rng.integers(-300, 301, depth), -32768, 32767)
        else:
            out[r] = 32767 - rng.integers(0, 40, depth)
    return out


# shape, out ("int8", "int16": from int8; "int16in": int16 -> int16; "float32"), in_q, beta
Case = tuple[tuple[int, ...], str, tuple[float, int] | None, float]


def softmax_model(cases: Sequence[Case]) -> bytes:
    b = ModelBuilder("softmax cases")
    ins, outs = [], []
    for shape, out_dtype, in_q, beta in cases:
        if in_q is None:
            x = b.tensor(shape, "float32")
            y = b.tensor(shape, "float32")
        elif out_dtype == "int16in":  # int16 -> int16
            x = b.tensor(shape, "int16", scale=in_q[0], zero_point=in_q[1])
            y = b.tensor(shape, "int16", scale=1 / 32768, zero_point=0)
        else:
            x = b.tensor(shape, "int8", scale=in_q[0], zero_point=in_q[1])
            oq = OUT_Q[out_dtype]
            y = b.tensor(shape, out_dtype, scale=oq[0], zero_point=oq[1])
        b.op("SOFTMAX", [x], [y], SoftmaxOptions(beta))
        ins.append(x)
        outs.append(y)
    return b.build(ins, outs)


def case_inputs(cases: Sequence[Case], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    data = []
    for shape, out_dtype, in_q, _ in cases:
        depth = shape[-1]
        rows = int(np.prod(shape)) // depth
        if in_q is None:
            x = rng.standard_normal((rows, depth)).astype(np.float32) * 5
            x[::3] *= 20  # some rows saturate
        elif out_dtype == "int16in":
            x = rows_int16(rng, rows, depth)
        else:
            x = rows_int8(rng, rows, depth)
        data.append(x.reshape(shape))
    return data


def run_kernel(lib: ctypes.CDLL, case: Case, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    shape, out_dtype, in_q, beta = case
    depth = shape[-1]
    rows = x.size // depth
    if in_q is None:
        out = np.zeros_like(x)
        assert lib.nnrt_softmax_f32(ctypes.c_float(beta), ptr(x), ptr(out), rows, depth) == 0
        inplace = x.copy()
        assert lib.nnrt_softmax_f32(ctypes.c_float(beta), ptr(inplace), ptr(inplace), rows,
                                    depth) == 0
        return out, inplace
    graph = load_model_bytes(softmax_model([case]))
    op = graph.ops[0]
    assert isinstance(op.options, SoftmaxOptions)  # beta as the model stores it (float32)
    if out_dtype == "int16in":
        p16 = Params16(**softmax_s16_params(op, graph.tensors[0].quant.scale[0],
                                            op.options.beta))
        out16 = np.zeros_like(x)
        assert lib.nnrt_softmax_s16(ctypes.byref(p16), ptr(x), ptr(out16), rows, depth) == 0
        inplace = x.copy()
        assert lib.nnrt_softmax_s16(ctypes.byref(p16), ptr(inplace), ptr(inplace), rows,
                                    depth) == 0
        return out16, inplace
    p = Params(**softmax_params(op, graph.tensors[0].quant.scale[0], op.options.beta))
    if out_dtype == "int16":
        out16 = np.zeros(x.shape, dtype=np.int16)
        assert lib.nnrt_softmax_s8_s16(ctypes.byref(p), ptr(x), ptr(out16), rows, depth) == 0
        return out16, out16
    out = np.zeros_like(x)
    assert lib.nnrt_softmax_s8(ctypes.byref(p), ptr(x), ptr(out), rows, depth) == 0
    inplace = x.copy()
    assert lib.nnrt_softmax_s8(ctypes.byref(p), ptr(inplace), ptr(inplace), rows, depth) == 0
    return out, inplace


def check_cases(lib: ctypes.CDLL, cases: Sequence[Case], seed: int = 0) -> None:
    model = softmax_model(cases)
    check_graph(load_model_bytes(model))
    inputs = case_inputs(cases, seed)
    want, _ = run_tflm(model, inputs)
    for case, x, w in zip(cases, inputs, want, strict=True):
        got, inplace = run_kernel(lib, case, x)
        if case[2] is None:
            np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-30, err_msg=str(case))
            np.testing.assert_array_equal(got.view(np.int32), w.view(np.int32))  # glibc expf
        else:
            np.testing.assert_array_equal(got, w, err_msg=str(case))
        np.testing.assert_array_equal(inplace, got, err_msg=f"in place {case}")


DEPTHS = (1, 2, 3, 10, 64, 100, 255)
SCALES = (0.001, 1 / 256, 0.02, 0.0625, 0.1, 0.37, 1.0, 4.0)


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_int8_scales_and_depths(lib: ctypes.CDLL, out_dtype: str) -> None:
    cases: list[Case] = [((5, d), out_dtype, (s, int(zp)), 1.0)
                         for d in DEPTHS for s, zp in zip(SCALES, range(-128, 128, 31),
                                                          strict=False)]
    check_cases(lib, cases, seed=1)


@pytest.mark.parametrize("beta", [1e-3, 0.25, 0.5, 2.0, 10.0, 40.0, 300.0])
def test_int8_betas(lib: ctypes.CDLL, beta: float) -> None:
    # beta * scale from 1e-5 up to 300: the largest hit the 2^31 - 1 cap (shift 31, only
    # the row maximum survives diff_min).
    cases: list[Case] = [((10, 32), out, (s, 3), beta) for s in (0.01, 0.1, 1.0)
                         for out in ("int8", "int16")]
    check_cases(lib, cases, seed=2)


def test_int8_shapes(lib: ctypes.CDLL) -> None:
    # the last axis of 1-D to 4-D tensors; long rows with spread values
    cases: list[Case] = [((7,), "int8", (0.1, 0), 1.0), ((2, 3, 4, 13), "int8", (0.08, -5), 1.0),
                         ((1, 1000), "int8", (0.2, 10), 1.0), ((3, 1, 1001), "int16", (0.5, 0),
                                                                 1.0),
                         # either side of the exp table (over 128 elements), differences
                         # below diff_min among them (scale 1: diff_min -31)
                         ((1, 128), "int8", (1.0, 0), 1.0), ((1, 129), "int8", (1.0, 0), 1.0),
                         ((3, 43), "int16", (1.0, 0), 1.0), ((96, 32), "int8", (0.039, -6), 1.0)]
    check_cases(lib, cases, seed=3)


def test_float(lib: ctypes.CDLL) -> None:
    cases: list[Case] = [((4, d), "float32", None, beta) for d in (1, 5, 100, 1001)
                         for beta in (1.0, 0.3, 4.0)]
    check_cases(lib, cases, seed=4)


def test_flat_long_row_is_safe(lib: ctypes.CDLL) -> None:
    # 600 equal values: TFLM aborts (its reciprocal exponent exceeds 31 once the sum of
    # exponentials reaches 512); our kernel rounds the tiny quotient to 0 instead.
    x = np.full((1, 600), 5, dtype=np.int8)
    out = np.zeros_like(x)
    p = Params(**softmax_params(None, 0.05, 1.0))  # type: ignore[arg-type]
    assert lib.nnrt_softmax_s8(ctypes.byref(p), ptr(x), ptr(out), 1, 600) == 0
    assert (out == -128).all()  # 1/600 < 0.5/256
    out16 = np.zeros(x.shape, dtype=np.int16)
    assert lib.nnrt_softmax_s8_s16(ctypes.byref(p), ptr(x), ptr(out16), 1, 600) == 0
    assert (out16 == round(65536 / 600) - 32768).all()


def test_bad_arguments(lib: ctypes.CDLL) -> None:
    x = np.zeros(8, dtype=np.int8)
    p = Params(1 << 30, 3, -100)
    assert lib.nnrt_softmax_s8(ctypes.byref(p), ptr(x), ptr(x), 1, 0) == -1
    assert lib.nnrt_softmax_s8(None, ptr(x), ptr(x), 1, 8) == -1
    assert lib.nnrt_softmax_s8(ctypes.byref(Params(1 << 30, 32, 0)), ptr(x), ptr(x), 1, 8) == -1
    assert lib.nnrt_softmax_f32(ctypes.c_float(1.0), ptr(x), ptr(x), -1, 2) == -1
    assert lib.nnrt_softmax_s8(ctypes.byref(p), ptr(x), ptr(x), 0, 8) == 0  # no rows


@pytest.mark.parametrize("in_dtype, out_dtype, out_q, beta, match", [
    ("int8", "int8", (1 / 255, -128), 1.0, "1/256"),
    ("int8", "int8", (1 / 256, 0), 1.0, "-128"),
    ("int8", "int16", (1 / 32768, 0), 1.0, "-32768"),
    ("int16", "int16", (1 / 65536, 0), 1.0, "1/32768"),
    ("int16", "int16", (1 / 32768, 5), 1.0, "zero points 0"),
    ("int16", "int8", (1 / 256, -128), 1.0, "int16 -> int16"),
    ("int16", "int16", (1 / 32768, 0), 1e3, "outside the kernel's"),
    ("uint8", "uint8", (1 / 256, 0), 1.0, "uint8"),
    ("int8", "int8", (1 / 256, -128), 1e-9, "too small"),
])
def test_check_refuses(in_dtype: str, out_dtype: str, out_q: tuple[float, int], beta: float,
                       match: str) -> None:
    b = ModelBuilder()
    x = b.tensor((1, 10), in_dtype, scale=0.05, zero_point=0)
    y = b.tensor((1, 10), out_dtype, scale=out_q[0], zero_point=out_q[1])
    b.op("SOFTMAX", [x], [y], SoftmaxOptions(beta))
    with pytest.raises(UnsupportedError, match=match) as info:
        check_graph(load_model_bytes(b.build([x], [y])))
    assert "op 0 (SOFTMAX)" in info.value.message


@pytest.mark.slow
def test_pipeline_bit_exact() -> None:
    cases: list[Case] = [((2, 5, 10), "int8", (0.1, -3), 1.0), ((4, 37), "int16", (0.05, 7), 0.5),
                         ((1, 1, 12), "int8", (0.3, 20), 40.0), ((3, 20), "float32", None, 1.0),
                         ((6, 9), "float32", None, 2.5), ((3, 11), "int16in", (0.002, 0), 1.0),
                         ((2, 2, 40), "int16in", (1e-4, 0), 0.7)]
    model = softmax_model(cases)
    inputs = case_inputs(cases, seed=5)
    want, _ = run_tflm(model, inputs)
    got, _ = run_nnopt(model, inputs)
    for case, g, w in zip(cases, got, want, strict=True):
        if case[2] is None:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-30, err_msg=str(case))
        else:
            np.testing.assert_array_equal(g, w, err_msg=str(case))


# ----- int16 -> int16 (TFLM's SoftmaxInt16) -----

# 10 / 65535 is the exp table's input step: input scale * beta over 5 orders either side,
# the multiplier's shift from -31 to 15
SCALES16 = (1e-9, 1e-6, 3.0517578e-05, 1e-4, 2e-3, 1 / 64, 0.05, 0.3, 2.0, 4.9)


@pytest.mark.parametrize("depth", [1, 2, 5, 16, 100, 513, 1000])
def test_int16_scales_and_depths(lib: ctypes.CDLL, depth: int) -> None:
    cases: list[Case] = [((12, depth), "int16in", (s, 0), 1.0) for s in SCALES16]
    check_cases(lib, cases, seed=6 + depth)


@pytest.mark.parametrize("beta", [1e-3, 0.5, 2.0, 10.0])
def test_int16_betas(lib: ctypes.CDLL, beta: float) -> None:
    cases: list[Case] = [((12, 24), "int16in", (s, 0), beta) for s in (1e-4, 2e-3, 0.05)]
    check_cases(lib, cases, seed=7)


def test_int16_tables_are_the_generated_file() -> None:
    exp_table, recip_table = softmax_tables()
    assert len(exp_table) == len(recip_table) == ENTRIES
    # exp on [-10, 0] in Q0.15 (2/65535 steps): rises to 32767 at 0; 1/(1+x) on [0, 1]
    # falls from 32767 to 16384
    assert exp_table[-1] == 32767 and exp_table[0] in (1, 2, 3)
    assert all(a <= b for a, b in itertools.pairwise(exp_table))
    assert recip_table[0] == 32767 and recip_table[-1] == 16384
    folder = nnrt_dir() / "kernels" / "softmax"
    for name, text in render_c().items():
        assert (folder / name).read_text(encoding="utf-8") == text, \
            f"{name} is stale: regenerate with python -m nnopt.softmax_table {folder}"


def test_int16_bad_arguments(lib: ctypes.CDLL) -> None:
    x = np.zeros(8, dtype=np.int16)
    assert lib.nnrt_softmax_s16(ctypes.byref(Params16(1 << 30, 16)), ptr(x), ptr(x), 1, 8) == -1
    assert lib.nnrt_softmax_s16(ctypes.byref(Params16(1 << 30, -32)), ptr(x), ptr(x), 1, 8) == -1
    assert lib.nnrt_softmax_s16(ctypes.byref(Params16(1 << 30, 1)), ptr(x), ptr(x), 1, 0) == -1
    assert lib.nnrt_softmax_s16(None, ptr(x), ptr(x), 1, 8) == -1
    assert lib.nnrt_softmax_s16_check(ctypes.byref(Params16(-1, 1)), 1, 8) == -1
    assert lib.nnrt_softmax_s16_check(ctypes.byref(Params16(1 << 30, 15)), 1, 8) == 0
