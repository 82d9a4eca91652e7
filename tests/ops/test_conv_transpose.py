"""TRANSPOSE_CONV: bit-exact against TFLite Micro (int8 with per-channel and per-tensor
weights, int16 x int8 with an int64 bias, float32; strides 1, 2 and 3, non-square
strides and filters, SAME and VALID, with and without bias, batch 2, fused
activations, output extents that TFLM's padding rule leaves uneven), in one multi-op
model (one build, one oracle run), on the host and as Cortex-M7 firmware."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from nnopt.cdefs import DType
from nnopt.errors import UnsupportedError
from nnopt.firmware import BuildSpec, build, run
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import Tensor, TransposeConvOptions
from nnopt.lowering.transpose_conv import gemm_scratch_bytes, padding
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from support.cases import (
    Results,
    assert_case_matches,
    differing_tensors,
    oracle_results,
    tflm_and_cortex_m7,
)
from support.cbuild import kernel_sources
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder


class Case(NamedTuple):
    dtype: str
    batch: int
    in_hw: tuple[int, int]
    ic: int
    oc: int
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: str
    bias: bool
    activation: str = "NONE"
    per_channel: bool = True
    out_hw: tuple[int, int] | None = None  # None: TFLite's shape rule for the padding

    @property
    def cid(self) -> str:
        (ih, iw), (kh, kw), (sh, sw) = self.in_hw, self.kernel, self.stride
        out = f"-out{self.out_hw[0]}x{self.out_hw[1]}" if self.out_hw else ""
        return (f"{self.dtype}-n{self.batch}-{ih}x{iw}x{self.ic}-oc{self.oc}-k{kh}x{kw}"
                f"-s{sh}x{sw}-{self.padding}-b{int(self.bias)}-{self.activation}"
                f"-pc{int(self.per_channel)}{out}")

    def output_hw(self) -> tuple[int, int]:
        if self.out_hw is not None:
            return self.out_hw
        (ih, iw), (kh, kw), (sh, sw) = self.in_hw, self.kernel, self.stride
        if self.padding == "SAME":
            return ih * sh, iw * sw
        return (ih - 1) * sh + kh, (iw - 1) * sw + kw


CASES = [
    Case(dt, n, hw, ic, oc, k, s, pad, bias)
    for dt in ("int8", "float32")
    for (n, hw, ic, oc, k, s) in (
        (1, (3, 4), 5, 7, (3, 3), (2, 2)),
        (2, (5, 3), 3, 4, (2, 3), (1, 1)),
        (1, (4, 5), 6, 3, (3, 2), (3, 3)),
        (2, (3, 3), 1, 2, (4, 4), (2, 3)),
        (1, (2, 5), 8, 9, (1, 1), (2, 1)),
        (1, (1, 1), 4, 5, (3, 3), (2, 2)),
    )
    for pad in ("SAME", "VALID")
    for bias in (False, True)
] + [
    Case("int8", 1, (3, 4), 5, 6, (3, 3), (2, 2), "SAME", True, "RELU"),
    Case("int8", 1, (3, 4), 5, 6, (3, 3), (2, 2), "VALID", False, "RELU6"),
    Case("int8", 2, (3, 4), 5, 6, (3, 2), (2, 2), "SAME", True, "NONE", per_channel=False),
    Case("float32", 1, (3, 4), 5, 6, (3, 3), (2, 2), "SAME", True, "RELU_N1_TO_1"),
    # output extents the shape rule does not give: TFLM pads by its conv rule over them
    Case("int8", 1, (4, 4), 3, 5, (3, 3), (2, 2), "SAME", True, out_hw=(7, 8)),
    Case("int8", 1, (3, 3), 3, 5, (3, 3), (2, 2), "VALID", False, out_hw=(8, 6)),
    Case("float32", 1, (4, 3), 3, 5, (5, 3), (3, 2), "SAME", False, out_hw=(11, 5)),
    # filters that are a multiple of the stride: all phases share one column per input
    # anchor (a U-Net's 2x2 / 2; 4x4 / 2 SAME crops the border anchors' pixels)
    Case("int8", 1, (3, 5), 6, 5, (2, 2), (2, 2), "VALID", True),
    Case("int8", 2, (3, 3), 4, 3, (4, 4), (2, 2), "SAME", False, "RELU"),
] + [
    Case("int16", n, hw, ic, oc, k, s, pad, bias, act)
    for (n, hw, ic, oc, k, s, pad, bias, act) in (
        (1, (3, 4), 5, 7, (3, 3), (2, 2), "SAME", True, "NONE"),
        (2, (5, 3), 3, 4, (2, 3), (1, 1), "VALID", False, "NONE"),
        (1, (4, 5), 6, 3, (3, 2), (3, 3), "SAME", True, "RELU"),
        (1, (3, 3), 1, 2, (4, 4), (2, 3), "VALID", True, "RELU6"),
    )
]


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("transpose conv cases")
    rng = np.random.default_rng(14)
    out_of: dict[str, int] = {}
    for c in CASES:
        (ih, iw), (kh, kw) = c.in_hw, c.kernel
        oh, ow = c.output_hw()
        xshape, wshape = (c.batch, ih, iw, c.ic), (c.oc, kh, kw, c.ic)
        bias = -1
        if c.dtype == "int8":
            x = b.tensor(xshape, "int8", scale=0.04, zero_point=-7,
                         data=rng.integers(-128, 128, xshape).astype(np.int8))
            scales = rng.uniform(0.002, 0.02, c.oc) if c.per_channel else 0.01
            w = b.const(rng.integers(-127, 128, wshape).astype(np.int8), scale=scales, axis=0)
            if c.bias:
                bias = b.const(rng.integers(-3000, 3000, c.oc).astype(np.int32),
                               scale=0.04 * np.atleast_1d(scales), axis=0)
            y = b.tensor((c.batch, oh, ow, c.oc), "int8", scale=0.25, zero_point=4)
        elif c.dtype == "int16":
            x = b.tensor(xshape, "int16", scale=0.001, zero_point=0,
                         data=rng.integers(-32768, 32768, xshape).astype(np.int16))
            scales = rng.uniform(0.002, 0.02, c.oc)
            w = b.const(rng.integers(-127, 128, wshape).astype(np.int8), scale=scales, axis=0)
            if c.bias:
                bias = b.const(rng.integers(-30000, 30000, c.oc).astype(np.int64),
                               scale=0.001 * scales, axis=0)
            y = b.tensor((c.batch, oh, ow, c.oc), "int16", scale=0.05, zero_point=0)
        else:
            x = b.tensor(xshape, "float32", data=rng.standard_normal(xshape).astype(np.float32))
            w = b.const(rng.standard_normal(wshape).astype(np.float32))
            if c.bias:
                bias = b.const(rng.standard_normal(c.oc).astype(np.float32))
            y = b.tensor((c.batch, oh, ow, c.oc), "float32")
        shape = b.const(np.asarray([c.batch, oh, ow, c.oc], dtype=np.int32))
        inputs = [shape, w, x] + ([bias] if c.bias else [])
        b.op("TRANSPOSE_CONV", inputs, [y],
             TransposeConvOptions(c.padding, c.stride[0], c.stride[1], c.activation))
        out_of[c.cid] = y
    # the graph input: a transposed convolution of an activation
    x = b.tensor((1, 3, 2, 2), "int8", name="x", scale=0.04, zero_point=-7)
    w = b.const(rng.integers(-127, 128, (3, 3, 3, 2)).astype(np.int8), scale=[0.01] * 3)
    y = b.tensor((1, 6, 4, 3), "int8", name="y", scale=0.25, zero_point=4)
    b.op("TRANSPOSE_CONV", [b.const(np.asarray([1, 6, 4, 3], dtype=np.int32)), w, x], [y],
         TransposeConvOptions("SAME", 2, 2))
    out_of["graph-input"] = y
    return b.build([x], [y]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-6, 6, dtype=np.int8).reshape(1, 3, 2, 2) * 9]


@pytest.fixture(scope="module")
def results() -> Results:
    # ASan + UBSan: no out-of-bounds access or undefined behaviour in the kernels
    return oracle_results(MODEL, INPUTS, OUT_OF, sanitize=True)


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(OUT_OF))
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid])


def test_padding_is_tflm_conv_rule_over_the_output() -> None:
    graph = load_model_bytes(MODEL)
    pads = {op.index: padding(graph, op) for op in graph.ops}
    by_case = {c.cid: pads[i] for i, c in enumerate(CASES)}
    # 3x3 filter, stride 2, SAME, 6x8 output: total (3-1)*2+3-6 = 1 -> 0 before
    assert by_case[CASES[0].cid] == (0, 0)
    # 4x4 filter, stride (2, 3), SAME over 6x9: totals 2 and 1 -> (1, 0)
    four = next(c for c in CASES if c.kernel == (4, 4) and c.padding == "SAME")
    assert by_case[four.cid] == (1, 0)


def _single(x_dtype: str, w_dtype: str, **quant: float) -> bytes:
    b = ModelBuilder()
    x = b.tensor((1, 2, 2, 2), x_dtype, **quant)
    w = b.const(np.ones((3, 3, 3, 2), dtype=w_dtype), **quant)
    y = b.tensor((1, 4, 4, 3), x_dtype, **quant)
    b.op("TRANSPOSE_CONV", [b.const(np.asarray([1, 4, 4, 3], dtype=np.int32)), w, x], [y],
         TransposeConvOptions("SAME", 2, 2))
    return b.build([x], [y])


def test_refuses_16x8_with_a_zero_point_by_name() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 2, 2, 2), "int16", scale=0.01, zero_point=3)
    w = b.const(np.ones((3, 3, 3, 2), dtype=np.int8), scale=0.01)
    y = b.tensor((1, 4, 4, 3), "int16", scale=0.01)
    b.op("TRANSPOSE_CONV", [b.const(np.asarray([1, 4, 4, 3], dtype=np.int32)), w, x], [y],
         TransposeConvOptions("SAME", 2, 2))
    with pytest.raises(UnsupportedError,
                       match=r"op 0 \(TRANSPOSE_CONV\).*INT16.*non-zero zero point"):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_refuses_uint8_by_name() -> None:
    with pytest.raises(UnsupportedError, match=r"op 0 \(TRANSPOSE_CONV\).*UINT8"):
        check_graph(load_model_bytes(_single("uint8", "uint8", scale=0.01)))


def test_refuses_hybrid_float_input_with_int8_weights() -> None:
    b = ModelBuilder()
    x = b.tensor((1, 2, 2, 2), "float32")
    w = b.const(np.ones((3, 3, 3, 2), dtype=np.int8), scale=0.1)
    y = b.tensor((1, 4, 4, 3), "float32")
    b.op("TRANSPOSE_CONV", [b.const(np.asarray([1, 4, 4, 3], dtype=np.int32)), w, x], [y],
         TransposeConvOptions("SAME", 2, 2))
    with pytest.raises(UnsupportedError, match=r"op 0 \(TRANSPOSE_CONV\).*FLOAT32"):
        check_graph(load_model_bytes(b.build([x], [y])))


@pytest.mark.slow
@pytest.mark.qemu
@needs_qemu
def test_bit_exact_on_cortex_m7() -> None:
    """The same cases as firmware on QEMU Cortex-M7 (the SMLAD dot products)."""
    bad = differing_tensors(*tflm_and_cortex_m7(MODEL, INPUTS), OUT_OF)
    assert not bad, f"{len(bad)} cases differ on Cortex-M7: {bad[:5]}"


def test_swap_keeps_its_weights_whole_in_internal_flash() -> None:
    """Its definition gives no weight slicing (weights=None): a forced swap streams the
    convolutions' weights but never a TRANSPOSE_CONV's."""
    from nnopt.planner import plan_model
    from nnopt.swap import SwapOptions, plan_swap

    b = ModelBuilder()
    rng = np.random.default_rng(3)
    x = b.tensor((1, 4, 4, 8), "int8", scale=0.05, zero_point=0)
    w1 = b.const(rng.integers(-127, 128, (8, 3, 3, 8)).astype(np.int8), scale=[0.01] * 8)
    h = b.tensor((1, 4, 4, 8), "int8", scale=0.05, zero_point=0)
    b.op("CONV_2D", [x, w1, -1], [h], {"padding": "SAME", "stride_h": 1, "stride_w": 1})
    w2 = b.const(rng.integers(-127, 128, (8, 3, 3, 8)).astype(np.int8), scale=[0.01] * 8)
    y = b.tensor((1, 8, 8, 8), "int8", scale=0.05, zero_point=0)
    b.op("TRANSPOSE_CONV", [b.const(np.asarray([1, 8, 8, 8], dtype=np.int32)), w2, h], [y],
         TransposeConvOptions("SAME", 2, 2))
    pm = plan_model(load_model_bytes(b.build([x], [y])), PlanOptions())
    s = plan_swap(pm.graph, pm.plan, None, SwapOptions(mode="force"))
    external = {t.tensor for t in s.tensors if t.pool == "external"}
    assert s.enabled and w1 in external
    assert w2 not in external


def test_cases_exercise_both_int8_kernels() -> None:
    """The int8 cases run the phase-split matrix core (scratch) and the gather kernel
    (filters smaller than the stride; scratch-free plans): both are checked above."""
    from nnopt.ops import lowering_for
    from nnopt.planner import plan_model

    pm = plan_model(load_model_bytes(MODEL), PlanOptions(order="file"))
    g = pm.graph
    int8 = [op for op in g.ops if g.tensors[op.inputs[2]].dtype.name == "INT8"]
    gemm = [op for op in int8 if lowering_for(op).scratch_bytes(g, op) > 0]
    assert len(gemm) >= 10 and len(int8) - len(gemm) >= 2
    small = next(op for op in int8 if g.tensors[op.inputs[1]].shape[1:3] == (1, 1))
    assert lowering_for(small).scratch_bytes(g, small) == 0  # 1x1 filter, stride 2


def test_scratch_rule_matches_the_kernel(tmp_path: Path) -> None:
    """gemm_scratch_bytes equals nnrt_transpose_conv_gemm_s8_get_buffer_size()."""
    src = tmp_path / "sizes.c"
    src.write_text(r"""
#include <stdio.h>
#include "nnrt/kernels/conv.h"
int main(void)
{
    nnrt_transpose_conv_s8_params_t p = {0};
    p.geom.batches = p.geom.input_h = p.geom.input_w = p.geom.output_h = 1;
    p.geom.output_w = 1;
    for (int c = 1; c <= 9; c += 4) {
        for (int k = 1; k <= 5; ++k) {
            for (int s = 1; s <= 3; ++s) {
                p.geom.input_c = c;
                p.geom.output_c = c + 2;
                p.geom.filter_h = k;
                p.geom.filter_w = k + 1;
                p.geom.stride_h = s;
                p.geom.stride_w = 4 - s;
                printf("%d %d %d %zu\n", c, k, s,
                       nnrt_transpose_conv_gemm_s8_get_buffer_size(&p));
            }
        }
    }
    return 0;
}
""")
    exe = build(BuildSpec(target="host", sources=(src, *kernel_sources("conv", "internal"))))
    res = run(exe, "host", [])
    assert res.exit_code == 0
    rows = [tuple(int(v) for v in line.split()) for line in res.stdout.splitlines()]
    assert len(rows) == 3 * 5 * 3
    for c, k, s, size in rows:
        w = Tensor(0, "w", (c + 2, k, k + 1, c), DType.INT8)
        assert size == gemm_scratch_bytes(w, TransposeConvOptions("SAME", s, 4 - s)), \
            (c, k, s)
    assert any(size == 0 for *_, size in rows) and any(size > 0 for *_, size in rows)
