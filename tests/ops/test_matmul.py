"""BATCH_MATMUL (int8, int16, float32; adj_x/adj_y; broadcast batch dimensions; ranks 2
to 5): bit-exact against TFLite Micro, in one multi-op model (one build, one oracle run;
on the host and as Cortex-M7 firmware); plus the refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.multiplier import quantize_multiplier
from nnopt.ops import check_graph
from support.cases import (
    Results,
    assert_case_matches,
    differing_tensors,
    mismatched_cases,
    oracle_results,
    random_quant,
    random_values,
    tflm_and_cortex_m7,
)
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder

# (lhs shape, rhs shape, adj_x, adj_y): shapes as stored (adjoint operands transposed)
MATMULS = [
    ((3, 4), (4, 5), False, False),
    ((2, 3, 4), (2, 4, 5), False, False),
    ((2, 4, 3), (2, 4, 5), True, False),
    ((2, 3, 4), (2, 5, 4), False, True),
    ((2, 4, 3), (2, 5, 4), True, True),
    ((3, 4), (2, 4, 5), False, False),          # lhs broadcast over the batch
    ((2, 1, 3, 4), (3, 4, 6), False, False),    # both broadcast
    ((1, 2, 2, 3, 7), (2, 1, 7, 2), False, False),
    ((2, 2, 7, 3), (2, 1, 2, 7), True, True),
    ((1, 1, 9), (1, 9, 1), False, False),
]


def _out_shape(a: tuple[int, ...], b: tuple[int, ...], adj_x: bool,
               adj_y: bool) -> tuple[int, ...]:
    rank = max(len(a), len(b))
    ea, eb = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    batch = tuple(max(x, y) for x, y in zip(ea[:-2], eb[:-2], strict=True))
    rows = ea[-1] if adj_x else ea[-2]
    cols = eb[-2] if adj_y else eb[-1]
    return (*batch, rows, cols)


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("matmul cases")
    rng = np.random.default_rng(17)
    out_of: dict[str, int] = {}
    for dtype in ("int8", "int16", "float32"):
        for k, (sa, sb, ax, ay) in enumerate(MATMULS):
            for rep in range(2 if dtype == "int8" else 1):
                qa, qb = random_quant(rng, dtype), random_quant(rng, dtype)
                x = b.tensor(sa, dtype, data=random_values(rng, sa, dtype), **qa)
                w = b.tensor(sb, dtype, data=random_values(rng, sb, dtype), **qb)
                qo: dict[str, Any] = {}
                if dtype != "float32":
                    depth = sa[-2] if ax else sa[-1]
                    lim = 127 if dtype == "int8" else 32767
                    qo = {"scale": qa["scale"] * qb["scale"] * lim * np.sqrt(depth) / 4,
                          "zero_point": int(rng.integers(-5, 5)) if dtype == "int8" else 0}
                y = b.tensor(_out_shape(sa, sb, ax, ay), dtype, **qo)
                b.op("BATCH_MATMUL", [x, w], [y], {"adj_x": ax, "adj_y": ay})
                out_of[f"bmm-{dtype}-{k}-{rep}"] = y
    # the graph input: lhs an activation, rhs constant (TFLM transposes it once)
    x = b.tensor((1, 3, 8), "int8", name="x", scale=0.05, zero_point=1)
    w = b.tensor((8, 4), "int8", data=random_values(rng, (8, 4), "int8"), scale=0.02, zero_point=0)
    y = b.tensor((1, 3, 4), "int8", name="y", scale=0.1, zero_point=-2)
    b.op("BATCH_MATMUL", [x, w], [y])
    out_of["graph-bmm"] = y
    return b.build([x], [y]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-12, 12, dtype=np.int8).reshape(1, 3, 8) * 5]


@pytest.fixture(scope="module")
def results() -> Results:
    return oracle_results(MODEL, INPUTS, OUT_OF)


def test_bit_exact_summary(results: Results) -> None:
    bad = mismatched_cases(results, float_close=True)
    assert len(results) > 40
    assert not bad, f"{len(bad)} cases differ from TFLM: {bad[:8]}"


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(OUT_OF))
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid], float_close=True)


def test_int8_outputs_are_not_degenerate(
        results: Results) -> None:
    # the quantisation of the cases leaves room: most outputs are neither saturated
    # nor constant, so equality with TFLM says something about the arithmetic
    for cid, (ref, _) in results.items():
        if cid.startswith("bmm-int8") and ref.size >= 8:
            assert len(np.unique(ref)) > 2, cid


def test_refuses_mixed_dtypes() -> None:
    b = ModelBuilder()
    x = b.tensor((2, 3), "float32")
    w = b.tensor((3, 2), "int8", data=np.ones((3, 2), np.int8), scale=0.1)
    y = b.tensor((2, 2), "float32")
    b.op("BATCH_MATMUL", [x, w], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(BATCH_MATMUL\).*supported: int8"):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_refuses_int16_with_a_zero_point() -> None:
    b = ModelBuilder()
    x = b.tensor((2, 3), "int16", scale=0.001, zero_point=4)
    w = b.tensor((3, 2), "int16", data=np.ones((3, 2), np.int16), scale=0.001)
    y = b.tensor((2, 2), "int16", scale=0.01)
    b.op("BATCH_MATMUL", [x, w], [y])
    with pytest.raises(UnsupportedError, match=r"BATCH_MATMUL.*zero point 4"):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_a_case_where_the_scale_product_precision_matters() -> None:
    # bmm-int16-6-0: a float32 product of the scales rounds the 16-bit multiplier of the
    # int16 requantisation differently from the double product TFLM's build uses; the
    # bit-exact case above holds with the double product only.
    g = load_model_bytes(MODEL)
    op = next(o for o in g.ops if o.outputs[0] == OUT_OF["bmm-int16-6-0"])
    sx, sw, so = (g.tensors[t].quant.scale[0] for t in (*op.inputs, *op.outputs))  # type: ignore[union-attr]

    def reduced(real: float) -> int:
        m, _ = quantize_multiplier(real)
        return (m + (1 << 15)) >> 16

    as_float = float(np.float32(np.float32(sx) * np.float32(sw))) / so
    assert reduced(sx * sw / so) != reduced(as_float)


@pytest.mark.slow
@pytest.mark.qemu
@needs_qemu
def test_bit_exact_on_cortex_m7() -> None:
    ref, got = tflm_and_cortex_m7(MODEL, INPUTS)
    bad = differing_tensors(ref, got, OUT_OF, float_close=True)
    assert not bad, f"{len(bad)} cases differ from TFLM on Cortex-M7: {bad[:8]}"
