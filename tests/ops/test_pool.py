"""MAX_POOL_2D, AVERAGE_POOL_2D and MEAN (int8, float32; MEAN int16) and L2_POOL_2D (float32, TFLM's
only kernel): bit-exact against TFLite Micro.

All cases run as one multi-op model (one build, one oracle run) and are checked one by
one: SAME/VALID padding (symmetric and asymmetric), windows larger than the input,
non-square windows and strides, global pooling, channel counts that are not a multiple
of the kernels' channel blocks, fused activations, zero points at the ends of the int8
range; MEAN over every kind of axis set, with and without keep_dims, with requantisation.
In-place max/average pooling (documented safe without top/left padding) is checked at
the C level.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import PoolOptions
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt
from support.cases import Results, mismatched_cases, oracle_results
from support.cbuild import CBuild, c_source, kernel_sources
from support.tflite_builder import ModelBuilder, pool2d_model, unary_model

Q = tuple[float, int]


@dataclass(frozen=True)
class PoolCase:
    id: str
    opcode: str
    dtype: str
    shape: tuple[int, int, int, int]
    filt: tuple[int, int]
    stride: tuple[int, int]
    padding: str
    act: str = "NONE"
    quant: Q = (0.05, -3)


@dataclass(frozen=True)
class MeanCase:
    id: str
    dtype: str
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    keep_dims: bool
    qin: Q = (0.05, -3)
    qout: Q = (0.05, -3)


def _pool_cases() -> list[PoolCase]:
    geoms = [
        ("valid2x2s2", (1, 8, 8, 5), (2, 2), (2, 2), "VALID"),
        ("valid3x3s2odd", (1, 7, 9, 6), (3, 3), (2, 2), "VALID"),
        ("same3x3s1", (1, 6, 5, 4), (3, 3), (1, 1), "SAME"),
        ("same3x3s2even", (2, 8, 6, 3), (3, 3), (2, 2), "SAME"),
        ("same2x2s2odd", (1, 7, 7, 3), (2, 2), (2, 2), "SAME"),
        ("same5x5on3x3", (1, 3, 3, 4), (5, 5), (1, 1), "SAME"),
        ("nonsquare", (1, 6, 9, 3), (1, 3), (2, 1), "SAME"),
        ("global", (2, 7, 7, 70), (7, 7), (1, 1), "VALID"),
        ("wide_channels", (1, 5, 5, 133), (3, 3), (2, 2), "SAME"),
    ]
    out = []
    for opcode in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        short = "max" if opcode == "MAX_POOL_2D" else "avg"
        for name, shape, f, s, pad in geoms:
            for dtype in ("int8", "float32"):
                out.append(PoolCase(f"{short}-{dtype}-{name}", opcode, dtype, shape, f, s, pad))
        for act in ("RELU", "RELU6", "RELU_N1_TO_1"):
            for dtype in ("int8", "float32"):
                out.append(PoolCase(f"{short}-{dtype}-{act}", opcode, dtype, (1, 6, 6, 7),
                                    (3, 3), (2, 2), "SAME", act, (0.03, -20)))
        for zp in (-128, 127):
            out.append(PoolCase(f"{short}-int8-zp{zp}", opcode, "int8", (1, 6, 6, 7), (3, 3),
                                (2, 2), "SAME", "RELU6", (0.02, zp)))
    for name, shape, f, s, pad in geoms:
        out.append(PoolCase(f"l2-float32-{name}", "L2_POOL_2D", "float32", shape, f, s, pad))
    for act in ("RELU6", "RELU_N1_TO_1"):
        out.append(PoolCase(f"l2-float32-{act}", "L2_POOL_2D", "float32", (1, 6, 6, 7),
                            (3, 3), (2, 2), "SAME", act))
    return out


def _mean_cases() -> list[MeanCase]:
    out = []
    for dtype in ("int8", "float32"):
        d = dtype
        out += [
            MeanCase(f"{d}-hw-keep", d, (1, 5, 7, 9), (1, 2), True),
            MeanCase(f"{d}-hw-drop", d, (2, 4, 4, 6), (1, 2), False),
            MeanCase(f"{d}-wh-keep", d, (1, 3, 3, 70), (2, 1), True),
            MeanCase(f"{d}-last", d, (2, 3, 11), (-1,), False),
            MeanCase(f"{d}-outer-inner", d, (3, 4, 2, 5), (0, 3), True),
            MeanCase(f"{d}-middle", d, (2, 6, 3, 4), (2,), False),
            MeanCase(f"{d}-all", d, (2, 3, 4, 5), (0, 1, 2, 3), False),
            MeanCase(f"{d}-dup-neg", d, (1, 4, 6, 3), (-3, 1, -2), True),
            MeanCase(f"{d}-big-count", d, (1, 16, 16, 3), (1, 2), True),
            MeanCase(f"{d}-count1", d, (1, 1, 1, 12), (1, 2), True),
            MeanCase(f"{d}-5d", d, (2, 3, 2, 3, 4), (1, 3), False),
        ]
    out += [
        MeanCase("int8-requant-up", "int8", (1, 7, 7, 16), (1, 2), True, (0.05, -3),
                 (0.01, 10)),
        MeanCase("int8-requant-down", "int8", (1, 7, 7, 16), (1, 2), False, (0.02, 5),
                 (0.3, -100)),
        MeanCase("int8-zp-extremes", "int8", (1, 6, 5, 8), (1, 2), True, (0.1, -128),
                 (0.01, 127)),
        MeanCase("int8-zp-extremes-rev", "int8", (1, 6, 5, 8), (1, 2), True, (0.1, 127),
                 (0.07, -128)),
        # int16 (TFLM's QuantizedMeanOrSum over int16): requantised up and down, zero
        # points, every kind of axis set
        MeanCase("int16-hw-keep", "int16", (1, 5, 7, 9), (1, 2), True, (0.001, 0),
                 (0.0007, 0)),
        MeanCase("int16-last", "int16", (2, 3, 11), (-1,), False, (0.001, 0), (0.003, 0)),
        MeanCase("int16-all-dup", "int16", (2, 3, 4, 5), (0, -1, 1, 2, 3), False,
                 (0.002, 0), (0.0005, 0)),
        MeanCase("int16-outer-inner-zp", "int16", (3, 4, 2, 5), (0, 3), True, (0.001, 7),
                 (0.0009, -5)),
        MeanCase("int16-big-count", "int16", (1, 16, 16, 3), (1, 2), True, (0.001, 0),
                 (0.001, 0)),
    ]
    return out


POOL_CASES = _pool_cases()
MEAN_CASES = _mean_cases()


def _q(quant: Q, dtype: str) -> dict[str, Any]:
    return {} if dtype == "float32" else {"scale": quant[0], "zero_point": quant[1]}


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "int8":
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    if dtype == "int16":
        return rng.integers(-32768, 32768, size=shape).astype(np.int16)
    return (rng.standard_normal(shape) * 3).astype(np.float32)


def _pool_out(size: int, f: int, s: int, padding: str) -> int:
    return -(-size // s) if padding == "SAME" else (size - f) // s + 1


def add_cases(b: ModelBuilder, seed: int = 5) -> dict[str, int]:
    """Add every case to ``b``; returns case id -> result tensor. The harness runner
    takes at most 16 graph inputs and outputs, so case inputs are random constants and
    case results intermediate tensors (both sides trace every tensor)."""
    rng = np.random.default_rng(seed)
    out_of: dict[str, int] = {}
    for c in POOL_CASES:
        n, h, w, ch = c.shape
        x = b.tensor(c.shape, c.dtype, name=f"{c.id}/x", data=_data(rng, c.shape, c.dtype),
                     **_q(c.quant, c.dtype))
        oshape = (n, _pool_out(h, c.filt[0], c.stride[0], c.padding),
                  _pool_out(w, c.filt[1], c.stride[1], c.padding), ch)
        y = b.tensor(oshape, c.dtype, name=f"{c.id}/y", **_q(c.quant, c.dtype))
        b.op(c.opcode, [x], [y], PoolOptions(c.padding, c.stride[0], c.stride[1],
                                             c.filt[0], c.filt[1], c.act))
        out_of[c.id] = y
    for m in MEAN_CASES:
        x = b.tensor(m.shape, m.dtype, name=f"mean/{m.id}/x", data=_data(rng, m.shape, m.dtype),
                     **_q(m.qin, m.dtype))
        axis = b.const(np.asarray(m.axes, dtype=np.int32), name=f"mean/{m.id}/axis")
        rank = len(m.shape)
        red = {a % rank for a in m.axes}
        mshape = tuple(1 if d in red else m.shape[d] for d in range(rank)) if m.keep_dims \
            else tuple(m.shape[d] for d in range(rank) if d not in red)
        y = b.tensor(mshape, m.dtype, name=f"mean/{m.id}/y", **_q(m.qout, m.dtype))
        b.op("MEAN", [x, axis], [y], {"keep_dims": m.keep_dims})
        out_of[f"mean-{m.id}"] = y
    return out_of


def _cases_model() -> tuple[bytes, dict[str, int], list[np.ndarray]]:
    b = ModelBuilder("pool cases")
    out_of = add_cases(b)
    x = b.tensor((1, 4, 4, 2), "int8", name="x", scale=0.1, zero_point=0)  # drives one op
    z = b.tensor((1, 2, 2, 2), "int8", name="z", scale=0.1, zero_point=0)
    b.op("MAX_POOL_2D", [x], [z], PoolOptions("VALID", 2, 2, 2, 2))
    return b.build([x], [z]), out_of, [np.arange(32, dtype=np.int8).reshape(1, 4, 4, 2)]


@pytest.fixture(scope="module")
def results() -> Results:
    model, out_of, ins = _cases_model()
    return oracle_results(model, ins, out_of)


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                    or shutil.which("arm-none-eabi-gcc") is None,
                    reason="qemu-system-arm or arm-none-eabi-gcc not installed")
def test_cases_bit_exact_on_cortex_m7(results: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """The same pool and MEAN cases (int16 MEAN among them) as Cortex-M7 firmware."""
    model, out_of, ins = _cases_model()
    _, got = run_nnopt(model, ins, target="qemu-m7", options=PlanOptions(order="file"))
    bad = [cid for cid, t in out_of.items() if not np.array_equal(got[t], results[cid][0])]
    assert not bad, f"{len(bad)} cases differ on Cortex-M7: {bad[:5]}"


@pytest.mark.slow
@pytest.mark.parametrize("case", POOL_CASES, ids=[c.id for c in POOL_CASES])
def test_pool_bit_exact(results: Results,
                        case: PoolCase) -> None:
    ref, got = results[case.id]
    np.testing.assert_array_equal(got, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case", MEAN_CASES, ids=[c.id for c in MEAN_CASES])
def test_mean_bit_exact(results: Results,
                        case: MeanCase) -> None:
    ref, got = results[f"mean-{case.id}"]
    np.testing.assert_array_equal(got, ref)


# ----- refusals (no compilation) -----

def _refusal(model: bytes) -> str:
    with pytest.raises(UnsupportedError) as err:
        check_graph(load_model_bytes(model))
    return str(err.value)


@pytest.mark.parametrize(("opcode", "out_scale", "words"), [
    ("L2_POOL_2D", 0.1, ("INT8", "float32")),  # int8 L2 pooling
    ("AVERAGE_POOL_2D", 0.2, ("quantisation",)),  # pooling with requantisation
], ids=["int8-l2-pool", "pool-with-requantisation"])
def test_refuses_int8_pool(opcode: str, out_scale: float, words: tuple[str, ...]) -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4, 4, 2), "int8", scale=0.1, zero_point=0)
    y = b.tensor((1, 2, 2, 2), "int8", scale=out_scale, zero_point=0)
    b.op(opcode, [x], [y], PoolOptions("VALID", 2, 2, 2, 2))
    msg = _refusal(b.build([x], [y]))
    assert f"op 0 ({opcode})" in msg and all(w in msg for w in words)


def test_refuses_int16_l2_pool() -> None:
    msg = _refusal(pool2d_model("L2_POOL_2D", (1, 4, 4, 2), (2, 2), (2, 2), dtype="int16",
                                quant=(0.01, 0)))
    assert "op 0 (L2_POOL_2D)" in msg and "INT16" in msg and "float32" in msg


def _int16_pool_model() -> tuple[bytes, list[np.ndarray]]:
    """int16 MAX_POOL_2D and AVERAGE_POOL_2D (TFLM's pooling.cc takes int16): SAME and
    VALID, strides below and above the window, fused activations, a non-zero zero point;
    and a 16x8 convolution whose following max pool stays a separate op (the
    convolutions' fused pool is int8/float32 only)."""
    from nnopt.ir import ConvOptions

    rng = np.random.default_rng(48)
    b = ModelBuilder("pool_s16")
    q = {"scale": 2e-3, "zero_point": 0}
    x = b.tensor((1, 9, 7, 5), "int16", name="x", **q)
    outs = []
    for k, (opcode, pad, f, st, act) in enumerate((
            ("MAX_POOL_2D", "SAME", 3, 2, "NONE"), ("MAX_POOL_2D", "VALID", 2, 3, "RELU"),
            ("AVERAGE_POOL_2D", "SAME", 3, 2, "NONE"),
            ("AVERAGE_POOL_2D", "VALID", 2, 1, "RELU6"),
            ("AVERAGE_POOL_2D", "SAME", 4, 3, "RELU_N1_TO_1"))):
        oh = -(-9 // st) if pad == "SAME" else (9 - f) // st + 1
        ow = -(-7 // st) if pad == "SAME" else (7 - f) // st + 1
        y = b.tensor((1, oh, ow, 5), "int16", name=f"pool{k}", **q)
        b.op(opcode, [x], [y], PoolOptions(pad, st, st, f, f, act))
        outs.append(y)
    xz = b.tensor((1, 9, 7, 5), "int16", name="xz", scale=1e-3, zero_point=-300)
    yz = b.tensor((1, 5, 4, 5), "int16", name="avg_zp", scale=1e-3, zero_point=-300)
    b.op("AVERAGE_POOL_2D", [xz], [yz], PoolOptions("SAME", 2, 2, 3, 3))
    outs.append(yz)
    w = b.const(rng.integers(-127, 128, (4, 3, 3, 5)).astype(np.int8), scale=[0.01] * 4,
                zero_point=0, axis=0)
    bias = b.const(rng.integers(-40_000, 40_000, 4).astype(np.int64),
                   scale=[2e-5] * 4, axis=0)
    c = b.tensor((1, 9, 7, 4), "int16", name="conv", scale=0.02, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [c], ConvOptions("SAME", 1, 1, 1, 1, "NONE"))
    cp = b.tensor((1, 4, 3, 4), "int16", name="conv_pool", scale=0.02, zero_point=0)
    b.op("MAX_POOL_2D", [c], [cp], PoolOptions("VALID", 2, 2, 2, 2))
    outs.append(cp)
    model = b.build([x, xz], outs)
    xs = [rng.integers(-32768, 32768, (1, 9, 7, 5)).astype(np.int16) for _ in range(2)]
    return model, xs


def test_int16_pools_bit_exact_with_tflm() -> None:
    from nnopt.testing.harness import run_tflm

    model, xs = _int16_pool_model()
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    assert len(got) == len(ref) == 7
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        np.testing.assert_array_equal(g, np.asarray(r).reshape(g.shape), err_msg=str(k))


def test_refuses_mean_with_runtime_axes() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 4, 4, 2), "float32")
    axes = b.tensor((2,), "int32")
    y = b.tensor((1, 1, 1, 2), "float32")
    b.op("MEAN", [x, axes], [y], {"keep_dims": True})
    msg = _refusal(b.build([x, axes], [y]))
    assert "op 0 (MEAN)" in msg and "constant int32" in msg


def test_refuses_an_int16_mean_the_int32_sum_cannot_hold() -> None:
    msg = _refusal(unary_model("MEAN", (1, 182, 182, 2), dtype="int16", in_quant=(0.01, 0),
                               out_shape=(1, 1, 1, 2), options={"keep_dims": True},
                               extra_inputs=[np.array([1, 2], dtype=np.int32)]))
    assert "op 0 (MEAN)" in msg and "INT16" in msg and "at most 32767" in msg


# ----- in place, at the C level -----



def test_in_place_pooling_c(cbuild: CBuild) -> None:
    exe = cbuild.program("inplace", [c_source("pool_inplace.c"),
                                     *kernel_sources("pool", pattern="nnrt_*pool2d_*.c")],
                         debug=True)
    res = cbuild.run(exe)
    assert res.returncode == 0 and res.stdout.strip().endswith("OK"), res.stdout + res.stderr


def test_row_band_reductions_c(cbuild: CBuild) -> None:
    """nnrt_avgpool2d_rows_* and nnrt_mean_rows_* (a global pool or MEAN over row bands,
    issue 39) give the whole kernels' bytes for every band height, twice in a row."""
    exe = cbuild.program("pool_rows", [c_source("pool_rows.c"),
                                       *kernel_sources("pool", pattern="nnrt_avgpool2d_*.c"),
                                       *kernel_sources("pool", pattern="nnrt_mean_*.c")],
                         debug=True)
    res = cbuild.run(exe)
    assert res.returncode == 0 and res.stdout.strip().endswith("OK"), res.stdout + res.stderr


@pytest.mark.slow
def test_cases_sanitized() -> None:
    """The pool and MEAN cases built with ASan/UBSan: any out-of-bounds access or
    undefined behaviour in these kernels fails the run."""
    model, out_of, ins = _cases_model()
    assert not mismatched_cases(oracle_results(model, ins, out_of, sanitize=True))
