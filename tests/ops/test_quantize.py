"""QUANTIZE and DEQUANTIZE against the tflite-micro interpreter.

The C kernels are called directly (ctypes on a host build) with the parameters the
lowering computes: every integer type pair TFLM supports, exhaustively over int8/uint8/
int16 inputs, float32 inputs with exact rounding ties and saturation, each out of place
and in place (output at the input's address, also when element sizes differ). Then one
model with every variant runs through the whole pipeline.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
import pytest

from nnopt.cdefs import DType
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.lowering.quantize import DEQUANTIZE_PAIRS, QUANTIZE_PAIRS, requantize_params
from nnopt.ops import check_graph
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cbuild import kernel_library, ptr
from support.graphs import load_past_import_checks
from support.tflite_builder import ModelBuilder

# nnopt.lowering imports its family modules only while its registry is empty: importing
# one family module directly (above) would leave every other operator unregistered for
# the rest of the session. Register them all.

NP = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
      "int32": np.int32}
SUFFIX = {"float32": "f32", "int8": "s8", "uint8": "u8", "int16": "s16", "int32": "s32"}
Quant = tuple[float, int] | None


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    return kernel_library(tmp_path_factory, "quantize", "quantize", "internal")


class Affine(ctypes.Structure):
    _fields_ = [("scale", ctypes.c_float), ("zero_point", ctypes.c_int32)]


class Requant(ctypes.Structure):
    _fields_ = [("input_zero_point", ctypes.c_int32), ("output_zero_point", ctypes.c_int32),
                ("multiplier", ctypes.c_int32), ("shift", ctypes.c_int32)]


Case = tuple[str, str, str, Quant, Quant]  # opcode, in dtype, out dtype, in quant, out quant


def add_cases(b: ModelBuilder, cases: Sequence[Case], n: int) -> tuple[list[int], list[int]]:
    """One op a case, each on its own (1, n) input: the inputs and the outputs."""
    ins, outs = [], []
    for opcode, di, do, qi, qo in cases:
        ki = {} if qi is None else {"scale": qi[0], "zero_point": qi[1]}
        ko = {} if qo is None else {"scale": qo[0], "zero_point": qo[1]}
        x = b.tensor((1, n), di, **ki)
        y = b.tensor((1, n), do, **ko)
        b.op(opcode, [x], [y])
        ins.append(x)
        outs.append(y)
    return ins, outs


def cases_model(cases: Sequence[Case], n: int) -> bytes:
    b = ModelBuilder("quantize cases")
    return b.build(*add_cases(b, cases, n))


def inputs_for(dtype: str, scale: float | None, n: int, rng: np.random.Generator) -> np.ndarray:
    if dtype in ("int8", "uint8", "int16"):
        info = np.iinfo(NP[dtype])
        full = np.arange(info.min, info.max + 1, dtype=NP[dtype])
        return np.resize(full, n) if full.size < n else rng.choice(full, n, replace=False)
    if dtype == "int32":
        x = rng.integers(-(2**20), 2**20, n).astype(np.int32)
        x[:6] = [0, 1, -1, 2**24, -(2**24), 123456789 // 64]
        return x
    assert scale is not None
    k = rng.integers(-200, 200, n).astype(np.float32)
    x = (k + np.float32(0.5)) * np.float32(scale)   # many exact .5 ties of x / scale
    x[: n // 4] = rng.standard_normal(n // 4).astype(np.float32) * 300 * np.float32(scale)
    # large but with x / scale inside int32 (beyond it TFLM's C++ is undefined)
    x[-8:] = np.array([0.0, -0.0, 1e-30, 1e5, -1e5, 3e4, -3e4, 0.49999997], np.float32)
    return x


def run_kernel(lib: ctypes.CDLL, opcode: str, di: str, do: str, params: ctypes.Structure,
               x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Out of place, and in place (output at the input's address, buffer big enough)."""
    n = x.size
    out = np.zeros(n, dtype=NP[do])
    big = np.zeros(n * max(x.itemsize, out.itemsize), dtype=np.uint8)
    big[: x.nbytes] = x.view(np.uint8).reshape(-1)
    if opcode == "DEQUANTIZE" or di == "float32":
        func = "dequantize" if opcode == "DEQUANTIZE" else "quantize"
        fn = getattr(lib, f"nnrt_{func}_{SUFFIX[di]}_{SUFFIX[do]}")
        assert fn(ctypes.byref(params), ptr(x), ptr(out), n) == 0
        assert fn(ctypes.byref(params), ptr(big), ptr(big), n) == 0
    elif di == do == "int8":
        assert lib.nnrt_requantize_s8(ctypes.byref(params), ptr(x), ptr(out), n) == 0
        assert lib.nnrt_requantize_s8(ctypes.byref(params), ptr(big), ptr(big), n) == 0
    else:
        ti, to = DType[di.upper()], DType[do.upper()]
        assert lib.nnrt_requantize(ctypes.byref(params), ptr(x), ti, ptr(out), to, n) == 0
        assert lib.nnrt_requantize(ctypes.byref(params), ptr(big), ti, ptr(big), to, n) == 0
    return out, big[: out.nbytes].view(NP[do])


def check_cases(lib: ctypes.CDLL, cases: Sequence[Case], n: int = 512, seed: int = 0) -> None:
    model = cases_model(cases, n)
    graph = load_model_bytes(model)
    check_graph(graph)
    rng = np.random.default_rng(seed)
    inputs = [inputs_for(di, None if qi is None else qi[0], n, rng).reshape(1, n)
              if di != "float32" else
              inputs_for(di, qo[0] if qo else 1.0, n, rng).reshape(1, n)
              for _, di, _, qi, qo in cases]
    want, _ = run_tflm(model, inputs)
    for op, case, x, w in zip(graph.ops, cases, inputs, want, strict=True):
        opcode, di, do, _, _ = case
        xt, yt = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        params: ctypes.Structure
        if opcode == "DEQUANTIZE":
            assert xt.quant is not None
            params = Affine(xt.quant.scale[0], xt.quant.zero_point[0])
        elif di == "float32":
            assert yt.quant is not None
            params = Affine(yt.quant.scale[0], yt.quant.zero_point[0])
        else:
            params = Requant(**requantize_params(op, xt, yt))
        got, inplace = run_kernel(lib, opcode, di, do, params, x.reshape(-1))
        w = w.reshape(-1)
        if do == "float32":  # exact: one float rounding of an exact product, both sides
            np.testing.assert_array_equal(got.view(np.int32), w.view(np.int32), str(case))
        else:
            np.testing.assert_array_equal(got, w, err_msg=str(case))
        np.testing.assert_array_equal(inplace, got, err_msg=f"in place {case}")


QUANTS = {
    "int8": [(0.05, 0), (0.1, -128), (0.003, 127), (0.37, -20), (1.0, 5)],
    "uint8": [(0.05, 128), (0.02, 0), (0.5, 255), (0.1, 100)],
    "int16": [(1 / 4096, 0), (0.001, -300), (0.02, 1000), (2.0, -32768)],
    "int32": [(1e-4, 0), (0.002, 50), (0.05, -1000)],
    "float32": [None],
}


def _pair_cases(opcode: str, di: str, do: str) -> list[Case]:
    out: list[Case] = []
    for k, qi in enumerate(QUANTS[di]):
        for j, qo in enumerate(QUANTS[do]):
            if (k + j) % 2 == 0 or len(QUANTS[di]) == 1 or len(QUANTS[do]) == 1:
                out.append((opcode, di, do, qi, qo))
    return out


@pytest.mark.parametrize("di, do", [(a.name.lower(), b.name.lower())
                                    for a, b in QUANTIZE_PAIRS])
def test_quantize_pairs(lib: ctypes.CDLL, di: str, do: str) -> None:
    check_cases(lib, _pair_cases("QUANTIZE", di, do))


def test_requantize_int8_all_pairs_exhaustive(lib: ctypes.CDLL) -> None:
    # every (input quant, output quant) combination, all 256 inputs, incl. identity
    cases: list[Case] = [("QUANTIZE", "int8", "int8", qi, qo)
                         for qi in QUANTS["int8"] for qo in QUANTS["int8"]]
    check_cases(lib, cases, n=256)


@pytest.mark.parametrize("di", [a.name.lower() for a, _ in DEQUANTIZE_PAIRS])
def test_dequantize(lib: ctypes.CDLL, di: str) -> None:
    n = 65536 if di == "int16" else 256
    cases: list[Case] = [("DEQUANTIZE", di, "float32", q, None) for q in QUANTS[di]]
    cases += [("DEQUANTIZE", di, "float32", (0.1 / 3, 1 if di != "int16" else 7), None)]
    check_cases(lib, cases, n=n)


def test_float_extremes_saturate(lib: ctypes.CDLL) -> None:
    # Beyond int32 (and NaN) TFLM's C++ has undefined behaviour (x86-64 gives -128);
    # ours saturates and maps NaN to the zero point.
    x = np.array([np.inf, -np.inf, np.nan, 3e38, -3e38, 1e10, -1e10], dtype=np.float32)
    out = np.zeros(x.size, dtype=np.int8)
    assert lib.nnrt_quantize_f32_s8(ctypes.byref(Affine(0.1, 7)), ptr(x), ptr(out), x.size) == 0
    assert out.tolist() == [127, -128, 7, 127, -128, 127, -128]
    out16 = np.zeros(x.size, dtype=np.int16)
    assert lib.nnrt_quantize_f32_s16(ctypes.byref(Affine(0.1, -7)), ptr(x), ptr(out16),
                                     x.size) == 0
    assert out16.tolist() == [32767, -32768, -7, 32767, -32768, 32767, -32768]


def test_bad_arguments(lib: ctypes.CDLL) -> None:
    x = np.zeros(8, dtype=np.int8)
    assert lib.nnrt_quantize_f32_s8(ctypes.byref(Affine(0.0, 0)), ptr(x), ptr(x), 2) == -1
    assert lib.nnrt_quantize_f32_s8(ctypes.byref(Affine(0.1, 200)), ptr(x), ptr(x), 2) == -1
    assert lib.nnrt_dequantize_u8_f32(ctypes.byref(Affine(0.1, -1)), ptr(x), ptr(x), 2) == -1
    assert lib.nnrt_requantize_s8(ctypes.byref(Requant(0, 0, 1 << 30, 31)), ptr(x), ptr(x),
                                  2) == -1
    ok = ctypes.byref(Requant(0, 0, 1 << 30, 1))
    assert lib.nnrt_requantize(ok, ptr(x), DType.UINT8, ptr(x), DType.INT16, 2) == -2
    assert lib.nnrt_requantize(ok, ptr(x), DType.FLOAT32, ptr(x), DType.INT8, 2) == -2
    assert lib.nnrt_requantize(ctypes.byref(Requant(0, 300, 1 << 30, 1)), ptr(x),
                               DType.INT8, ptr(x), DType.UINT8, 2) == -1
    assert lib.nnrt_dequantize_s8_f32(None, ptr(x), ptr(x), 2) == -1


@pytest.mark.parametrize("opcode, di, do, qi, qo, match", [
    ("QUANTIZE", "float32", "uint8", None, (0.1, 128), "is float32, output .* is uint8"),
    ("QUANTIZE", "float32", "int32", None, (0.1, 0), "is float32, output .* is int32"),
    ("QUANTIZE", "int32", "int32", (0.1, 0), (0.2, 0), "is int32, output .* is int32"),
    ("QUANTIZE", "uint8", "int16", (0.1, 0), (0.2, 0), "uint8 -> int8, int16"),
    ("DEQUANTIZE", "int8", "int8", (0.1, 0), (0.1, 0), "supported: int8 -> float32"),
    ("QUANTIZE", "int8", "int8", (1.0, 0), (1e-12, 0), "scale ratio"),
    ("QUANTIZE", "float32", "int8", None, (0.1, 128), "zero point 128 outside"),
    ("DEQUANTIZE", "uint8", "float32", (0.1, -1), None, "zero point -1 outside"),
])
def test_check_refuses(opcode: str, di: str, do: str, qi: Quant, qo: Quant,
                       match: str,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    data = cases_model([(opcode, di, do, qi, qo)], 8)
    graph = load_past_import_checks(data, monkeypatch)
    with pytest.raises(UnsupportedError, match=match) as info:
        check_graph(graph)
    assert f"op 0 ({opcode})" in info.value.message


def test_check_refuses_per_channel() -> None:
    b = ModelBuilder()
    x = b.tensor((2, 4), "float32")
    y = b.tensor((2, 4), "int8", scale=[0.1, 0.2], zero_point=[0, 0], axis=0)
    b.op("QUANTIZE", [x], [y])
    with pytest.raises(UnsupportedError, match="per channel"):
        check_graph(load_model_bytes(b.build([x], [y])))


@pytest.mark.slow
def test_pipeline_bit_exact() -> None:
    cases: list[Case] = [
        ("QUANTIZE", "float32", "int8", None, (0.05, -3)),
        ("QUANTIZE", "float32", "int16", None, (0.001, 0)),
        ("QUANTIZE", "int8", "int8", (0.05, -3), (0.1, 20)),
        ("QUANTIZE", "int8", "int16", (0.05, -3), (0.001, 0)),
        ("QUANTIZE", "uint8", "int8", (0.05, 128), (0.05, 0)),
        ("QUANTIZE", "int16", "int8", (0.001, 0), (0.05, 5)),
        ("DEQUANTIZE", "int8", "float32", (0.05, -3), None),
        ("DEQUANTIZE", "int16", "float32", (0.001, 0), None),
    ]
    n = 256
    b = ModelBuilder("quantize pipeline")
    ins, outs = add_cases(b, cases, n)
    rng = np.random.default_rng(9)
    data = [inputs_for(di, qo[0] if di == "float32" and qo else (qi[0] if qi else 1.0),
                       n, rng).reshape(1, n) for _, di, _, qi, qo in cases]
    # a round trip whose int8 intermediate is requantised in place
    x = b.tensor((1, n), "float32")
    q1 = b.tensor((1, n), "int8", scale=0.04, zero_point=-10)
    q2 = b.tensor((1, n), "int8", scale=0.06, zero_point=7)
    d = b.tensor((1, n), "float32")
    b.op("QUANTIZE", [x], [q1])
    b.op("QUANTIZE", [q1], [q2])
    b.op("DEQUANTIZE", [q2], [d])
    ins.append(x)
    outs.append(d)
    data.append(inputs_for("float32", 0.04, n, rng).reshape(1, n))
    model = b.build(ins, outs)
    want, want_all = run_tflm(model, data)
    got, got_all = run_nnopt(model, data)
    for op in load_model_bytes(model).ops:
        t = op.outputs[0]
        np.testing.assert_array_equal(got_all[t], want_all[t], err_msg=f"op {op.index}")
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
