"""SQUARED_DIFFERENCE (int8 with TFLM's requantisation, int16, int32, float32;
broadcasting): bit-exact against TFLite Micro, in one multi-op model (one build, one
oracle run; on the host and as Cortex-M7 firmware)."""

from __future__ import annotations

import numpy as np

from support.cases import (
    Results,
    assert_cortex_m7_matches,
    case_model_tests,
    random_quant,
    random_values,
)
from support.markers import slow_on_qemu
from support.tflite_builder import ModelBuilder

SQDIFF = [((2, 3, 5), (2, 3, 5)), ((2, 3, 5), (5,)), ((2, 1, 5), (1, 3, 1)),
          ((4, 6), (1,)), ((1, 3, 2, 4), (3, 1, 4))]


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("squared difference cases")
    rng = np.random.default_rng(17)
    out_of: dict[str, int] = {}
    for dtype in ("int8", "float32"):
        for k, (sa, sb) in enumerate(SQDIFF):
            for rep in range(3 if dtype == "int8" else 1):
                qa, qb = random_quant(rng, dtype), random_quant(rng, dtype)
                x = b.tensor(sa, dtype, data=random_values(rng, sa, dtype), **qa)
                w = b.tensor(sb, dtype, data=random_values(rng, sb, dtype), **qb)
                shape = np.broadcast_shapes(sa, sb)
                qo = {}
                if dtype == "int8":
                    qo = {"scale": float(rng.uniform(0.5, 4.0)) * max(qa["scale"], qb["scale"])
                          ** 2 * 64, "zero_point": int(rng.integers(-128, -100))}
                y = b.tensor(shape, dtype, **qo)
                b.op("SQUARED_DIFFERENCE", [x, w], [y])
                out_of[f"sqdiff-{dtype}-{k}-{rep}"] = y
    for k, (sa, sb) in enumerate(SQDIFF[:3]):
        for dtype in ("int16", "int32"):
            xa = random_values(rng, sa, dtype) // (1 if dtype == "int16" else 40000)
            xb = random_values(rng, sb, dtype) // (1 if dtype == "int16" else 40000)
            q16 = ({"scale": float(rng.uniform(1e-4, 1e-3)), "zero_point": 0}
                   if dtype == "int16" else {})
            qb16 = ({"scale": float(rng.uniform(1e-4, 1e-3)), "zero_point": 0}
                    if dtype == "int16" else {})
            x = b.tensor(sa, dtype, data=xa, **q16)
            w = b.tensor(sb, dtype, data=xb, **qb16)
            qo = ({"scale": max(q16["scale"], qb16["scale"]) ** 2 * 16000, "zero_point": 0}
                  if dtype == "int16" else {})
            y = b.tensor(np.broadcast_shapes(sa, sb), dtype, **qo)
            b.op("SQUARED_DIFFERENCE", [x, w], [y])
            out_of[f"sqdiff-{dtype}-{k}"] = y
    # the graph input through SQUARED_DIFFERENCE (an activation, not a constant)
    x = b.tensor((1, 3, 4), "int8", name="x", scale=0.05, zero_point=1)
    v = b.tensor((1, 3, 4), "int8", name="v", scale=0.3, zero_point=-128)
    b.op("SQUARED_DIFFERENCE", [x, b.const(np.asarray([1, -3, 0, 7], dtype=np.int8),
                                           scale=0.1, zero_point=-2)], [v])
    out_of["graph-sqdiff"] = v
    return b.build([x], [v]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-6, 6, dtype=np.int8).reshape(1, 3, 4) * 10]


results, test_bit_exact = case_model_tests(MODEL, INPUTS, OUT_OF, float_close=True)


def test_int8_outputs_are_not_degenerate(results: Results) -> None:
    """Most int8 outputs are neither saturated nor constant, so equality with TFLM says
    something about the requantisation."""
    for cid, (ref, _) in results.items():
        if cid.startswith("sqdiff-int8") and ref.size >= 8:
            assert len(np.unique(ref)) > 2, cid


@slow_on_qemu
def test_cases_on_cortex_m7() -> None:
    """Every case as Cortex-M7 firmware under QEMU, against TFLM on the host."""
    assert_cortex_m7_matches(MODEL, INPUTS, OUT_OF)
