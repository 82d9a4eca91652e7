"""float32 EXP, LOG, SQRT, RSQRT, ABS, NEG and DIV: nnopt's generated code bit-exact with
the tflite-micro interpreter on the same .tflite (one build covers all ops)."""

from __future__ import annotations

import numpy as np
import pytest

from nnopt.testing.harness import run_nnopt, run_tflm
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder


def _model() -> tuple[bytes, list[np.ndarray]]:
    rng = np.random.default_rng(3)
    n = 512
    b = ModelBuilder("math_f32")
    x = b.tensor((1, n), "float32", name="x")
    pos = b.tensor((1, n), "float32", name="pos")
    den = b.tensor((4, 1, n // 4), "float32", name="den")
    outs = []
    for opcode, src in (("EXP", x), ("NEG", x), ("ABS", x), ("LOG", pos), ("SQRT", pos),
                        ("RSQRT", pos)):
        y = b.tensor((1, n), "float32", name=opcode.lower())
        b.op(opcode, [src], [y])
        outs.append(y)
    xr = b.tensor((4, 1, n // 4), "float32", name="xr")
    b.op("RESHAPE", [x, b.const(np.array([4, 1, n // 4], np.int32))], [xr])
    div = b.tensor((4, 1, n // 4), "float32", name="div")
    b.op("DIV", [xr, den], [div])
    bden = b.const(np.array([3.0], np.float32))
    div2 = b.tensor((4, 1, n // 4), "float32", name="div_broadcast")
    b.op("DIV", [xr, bden], [div2], {"fused_activation_function": "RELU"})
    model = b.build([x, pos, den], [*outs, div, div2])
    xs = [(rng.standard_normal((1, n)) * 8).astype(np.float32),
          np.abs(rng.standard_normal((1, n)) * 100).astype(np.float32) + 1e-3,
          (rng.standard_normal((4, 1, n // 4)) + 0.1).astype(np.float32)]
    xs[0][0, :4] = [0.0, -0.0, 88.0, -100.0]
    return model, xs


def test_math_f32_bit_exact_with_tflm() -> None:
    model, xs = _model()
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    assert len(got) == len(ref) == 8
    for g, r in zip(got, ref, strict=True):
        assert g.tobytes() == np.asarray(r, dtype=np.float32).tobytes()


# ----- int8 and int32 DIV (issue 44: TFLM's div.cc takes both) -----

def _div_model() -> tuple[bytes, list[np.ndarray]]:
    """int8 DIV (same shapes; broadcast with RELU) and int32 DIV with activations.

    The int8 scales keep TFLM's total shift (output_shift - recip_shift - headroom) a
    right shift of at most 31, where its RoundingDivideByPOT is defined (module
    nnrt_div_s8.c: beyond that TFLM's result is undefined)."""
    rng = np.random.default_rng(44)
    b = ModelBuilder("div_int")
    a = b.tensor((2, 256), "int8", name="a", scale=0.02, zero_point=3)
    d = b.tensor((2, 256), "int8", name="d", scale=0.02, zero_point=-5)
    y = b.tensor((2, 256), "int8", name="q", scale=0.004, zero_point=2)
    b.op("DIV", [a, d], [y])
    a2 = b.tensor((2, 3, 8), "int8", name="a2", scale=0.5, zero_point=-1)
    d2 = b.tensor((1, 8), "int8", name="d2", scale=0.05, zero_point=0)
    y2 = b.tensor((2, 3, 8), "int8", name="q2", scale=0.02, zero_point=-3)
    b.op("DIV", [a2, d2], [y2], {"fused_activation_function": "RELU"})
    ai = b.tensor((3, 16), "int32", name="ai")
    di = b.tensor((1, 16), "int32", name="di")
    outs = [y, y2]
    for act in ("NONE", "RELU6"):
        yi = b.tensor((3, 16), "int32", name=f"qi_{act.lower()}")
        b.op("DIV", [ai, di], [yi], {"fused_activation_function": act})
        outs.append(yi)
    model = b.build([a, d, a2, d2, ai, di], outs)
    dv = rng.integers(-128, 128, (2, 256)).astype(np.int8)
    dv[dv == -5] = -4  # no division by the zero point (TFLM: undefined)
    d2v = rng.integers(1, 128, (1, 8)).astype(np.int8)
    aiv = rng.integers(-(2**31), 2**31, (3, 16), dtype=np.int64).astype(np.int32)
    aiv[0] = rng.integers(-50, 50, 16)
    div_ = rng.integers(-100, 100, (1, 16)).astype(np.int32)
    div_[div_ == 0] = 7
    xs = [rng.integers(-128, 128, (2, 256)).astype(np.int8), dv,
          rng.integers(-128, 128, (2, 3, 8)).astype(np.int8), d2v, aiv, div_]
    return model, xs


def test_div_int8_and_int32_bit_exact_with_tflm() -> None:
    model, xs = _div_model()
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    assert len(got) == len(ref) == 4
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        np.testing.assert_array_equal(g, np.asarray(r).reshape(g.shape), err_msg=str(k))
    assert len(np.unique(got[0])) > 64  # not all saturated


@pytest.mark.qemu
@needs_qemu
def test_div_int8_and_int32_on_cortex_m7_bit_exact_with_tflm() -> None:
    from nnopt.boards import load_board

    model, xs = _div_model()
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs, target="qemu-m7", board=load_board("nucleo_f767zi"))
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, np.asarray(r).reshape(g.shape))


def test_div_int8_small_quotients_are_rounded_not_undefined() -> None:
    """Scales where TFLM's shift passes 31 (its result is then undefined: the x86 oracle
    gives -128/127 for quotients near 0): nnopt's is the quotient rounded, within one
    step of the real-valued division."""
    b = ModelBuilder("div_small")
    a = b.tensor((1, 256), "int8", name="a", scale=0.01, zero_point=3)
    d = b.tensor((1, 256), "int8", name="d", scale=0.1, zero_point=-5)
    y = b.tensor((1, 256), "int8", name="y", scale=0.1, zero_point=2)
    b.op("DIV", [a, d], [y])
    model = b.build([a, d], [y])
    av = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    dv = np.full((1, 256), 95, np.int8)
    got, _ = run_nnopt(model, [av, dv])
    real = ((av.astype(np.float64) - 3) * 0.01) / ((dv.astype(np.float64) + 5) * 0.1)
    want = np.clip(np.round(real / 0.1) + 2, -128, 127)
    assert np.abs(got[0].astype(np.int32) - want).max() <= 1


def test_div_refusals_name_the_dtypes_and_scales() -> None:
    from nnopt.errors import UnsupportedError
    from nnopt.frontend.tflite import load_model_bytes
    from nnopt.ops import check_graph

    b = ModelBuilder("div_mixed")
    a = b.tensor((4,), "int16", name="a", scale=0.1, zero_point=0)
    y = b.tensor((4,), "int16", name="y", scale=0.1, zero_point=0)
    b.op("DIV", [a, a], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(DIV\).*INT16") as err:
        check_graph(load_model_bytes(b.build([a], [y])))
    assert "int8 (per-tensor quantised) or int32" in (err.value.hint or "")
    b = ModelBuilder("div_huge")
    a = b.tensor((4,), "int8", name="a", scale=1.0, zero_point=0)
    d = b.tensor((4,), "int8", name="d", scale=1e-3, zero_point=0)
    y = b.tensor((4,), "int8", name="y", scale=1e-4, zero_point=0)
    b.op("DIV", [a, d], [y])
    with pytest.raises(UnsupportedError, match="outside the kernel's range"):
        check_graph(load_model_bytes(b.build([a, d], [y])))
