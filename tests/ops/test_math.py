"""float32 EXP, LOG, SQRT, RSQRT, ABS, NEG and DIV: nnopt's generated code bit-exact with
the tflite-micro interpreter on the same .tflite (one build covers all ops)."""

from __future__ import annotations

import numpy as np

from nnopt.testing.harness import run_nnopt, run_tflm
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
